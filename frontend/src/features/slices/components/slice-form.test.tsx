import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { mockFetch, now, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { SliceForm } from './slice-form';

const MBIT = 1e6;
const link = { id: 1, switch_id: 1, name: 'edge-1-eth1', description: '', port: 1, capacity_bps: 400 * MBIT, queue_count: 8, model: 'netcalc', mtu_bytes: 1500, frame_overhead_bytes: 0, created_at: now, updated_at: now };
const stored = (id: number, name: string, rate: number, burst: number) => ({
  id, name, description: '', vlan_id: null, ipv4_prefixes: ['10.0.0.0/16'], rate_bps: rate * MBIT, burst_limit_s: burst,
  burst_bytes: (rate * MBIT * burst) / 8, delay_target_s: burst, priority: 7, scheme: 'tail_drop', marking_threshold_s: null,
  max_packet_bytes: null, sla: {}, link_ids: [1], path: [1], dp_sids: [], state: 'pending', created_at: now, updated_at: now,
});
const bound = (name: string, priority: number, d: number, target: number) => ({
  name, priority, burst_bytes: 0, residual_capacity_bps: 400 * MBIT, worst_case_delay_s: d, delay_target_s: target,
  meets_target: d <= target, slack_s: target - d,
});
const rejected = {
  type: 'https://sliceportal.dev/problems/admission-rejected', title: 'Slices would miss their delay bounds', status: 409,
  detail: "slice 'Peering' would leave 1 slice(s) outside their delay bounds on link 'edge-1-eth1'",
  violations: [{ link_id: 1, link: 'edge-1-eth1', slice: 'Enterprise', bound_s: 0.0207, target_s: 0.01, excess_s: 0.0107, reason: 'worst-case delay 20.7 ms exceeds target 10 ms' }],
  fixes: [
    { link_id: 1, kind: 'capacity', capacity_bps: 828 * MBIT, detail: "raise the capacity of link 'edge-1-eth1' to at least 828 Mbit/s" },
    { link_id: 1, kind: 'priority-plan', priorities: { Enterprise: 7, Peering: 6 }, detail: "give the slices on link 'edge-1-eth1' these priorities" },
  ],
};

function api(overrides: Parameters<typeof mockFetch>[0] = {}) {
  let posts = 0;
  const calls = mockFetch({
    'GET /api/v1/links': { data: [link], count: 1 },
    'GET /api/v1/links/1': link,
    'GET /api/v1/switches': { data: [], count: 0 },
    'GET /api/v1/slices': { data: [stored(2, 'Enterprise', 12, 0.01)], count: 1 },
    'POST /api/v1/analysis/bounds': (r) => {
      const doc = r.body as { slices: { name: string; priority: number; delay_target_s: number }[] };
      const d = doc.slices.every((s) => s.priority === 7) ? 0.0207 : 0.003;
      const slices = doc.slices.map((s) => bound(s.name, s.priority, s.name === 'Peering' && d < 0.01 ? 0.024 : d, s.delay_target_s));
      return { body: { model: (r.search.includes('harkous') ? 'harkous' : 'netcalc'), capacity_bps: 400 * MBIT, admissible: slices.every((s) => s.meets_target), total_rate_bps: 252 * MBIT, slices } };
    },
    'POST /api/v1/analysis/min-capacity': { model: 'netcalc', min_capacity_bps: 828 * MBIT },
    'POST /api/v1/analysis/priority-plan': { model: 'netcalc', feasible: true, priorities: { Enterprise: 7, Peering: 6 }, exhaustive: true, reason: '' },
    'POST /api/v1/slices': (r) => {
      posts += 1;
      const body = r.body as { priority: number };
      return body.priority === 7 ? { status: 409, body: rejected } : { status: 201, body: { ...stored(9, 'Peering', 240, 0.03), priority: body.priority } };
    },
    ...overrides,
  });
  return { calls, posts: () => posts };
}

async function fill(user: ReturnType<typeof userEvent.setup>) {
  const form = screen.getByRole('form', { name: 'Slice' });
  await user.type(within(form).getByLabelText(/^Name/), 'Peering');
  await user.type(within(form).getByLabelText(/^Rate limit/), '240');
  await user.type(within(form).getByLabelText(/^Burst limit/), '30');
  await user.type(within(form).getByLabelText(/^IPv4 destination prefixes/), '10.3.0.0/16');
  await user.click(await within(form).findByRole('checkbox', { name: /edge-1-eth1/ }));
  return form;
}

describe('SliceForm', () => {
  beforeEach(signInForTests);

  it('labels every input and shows the API-mirrored errors on submit', async () => {
    api();
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={() => {}} onCancel={() => {}} />);
    await user.click(screen.getByRole('button', { name: 'Create slice' }));
    const name = screen.getByLabelText(/^Name/);
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(name).toHaveAccessibleDescription('Required.');
    expect(screen.getByLabelText(/^VLAN id/)).toHaveAccessibleDescription(/needs a VLAN id or IPv4 prefixes/);
    await waitFor(() => expect(name).toHaveFocus());
  });

  it('previews the effect on the link while typing: why it does not fit and the fixes', async () => {
    api();
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={() => {}} onCancel={() => {}} />);
    await fill(user);
    const effects = await screen.findByTestId('slice-effects');
    expect(await within(effects).findByText('does not fit')).toBeInTheDocument();
    expect(await within(effects).findByText(/exceeds target 10 ms/)).toBeInTheDocument();
    expect((await within(effects).findAllByText(/828 Mbit\/s/)).length).toBeGreaterThan(0);
    expect(await within(effects).findByTestId('preview-plan')).toHaveTextContent('this slice → 6');
    await user.click(within(effects).getByRole('button', { name: 'Use priority 6' }));
    expect(screen.getByLabelText(/^Priority/)).toHaveValue('6');
  });

  it('offers the slice priorities 1 to 7: 0 is best effort\'s', () => {
    api();
    renderWithProviders(<SliceForm canAct onSaved={() => {}} onCancel={() => {}} />);
    const priority = screen.getByLabelText(/^Priority/);
    const options = within(priority).getAllByRole('option').map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(['7', '6', '5', '4', '3', '2', '1']);
    expect(priority).toHaveAccessibleDescription(/0 is best effort's/);
  });

  it('governs by the sound bound and shows the paper\'s figure beside it, planning on the slice levels', async () => {
    const { calls } = api();
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={() => {}} onCancel={() => {}} />);
    await fill(user);
    const effects = await screen.findByTestId('slice-effects');
    expect(await within(effects).findByText(/governed by network calculus \(sound\)/)).toBeInTheDocument();
    const table = await within(effects).findByRole('table', { name: /Worst-case delays/ });
    const headers = within(table).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Slice', 'Prio', 'Target', 'network calculus (sound)', 'paper (eq. 3, not an upper bound)', 'Slack']);
    await within(effects).findByTestId('preview-plan');
    const plans = calls.filter((c) => c.path === '/api/v1/analysis/priority-plan');
    expect(plans.length).toBeGreaterThan(0);
    // 8 queues: best effort keeps one, the slices may use 7 levels.
    expect(new URLSearchParams(plans[0]?.search).get('levels')).toBe('7');
    expect(new URLSearchParams(plans[0]?.search).get('model')).toBe('netcalc');
  });

  it('shows a rejection with its reason and applies the priority plan in one click', async () => {
    const { calls, posts } = api();
    const saved = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={saved} onCancel={() => {}} />);
    await fill(user);
    await user.click(screen.getByRole('button', { name: 'Create slice' }));
    const rejection = await screen.findByTestId('rejection');
    expect(within(rejection).getByTestId('violation-reason')).toHaveTextContent('worst-case delay 20.7 ms exceeds target 10 ms');
    await user.click(within(rejection).getByRole('button', { name: 'Apply priority plan and retry' }));
    await waitFor(() => expect(saved).toHaveBeenCalledTimes(1));
    expect(saved.mock.calls[0]?.[0]).toMatchObject({ name: 'Peering', priority: 6 });
    expect(posts()).toBe(2);
    // Enterprise already had priority 7: the plan changes no stored slice.
    expect(calls.filter((c) => c.method === 'PATCH')).toEqual([]);
  });

  it('offers ABC with its parameters: defaults at the typed rate, a prefix length for source prefixes', async () => {
    const { calls } = api();
    const saved = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={saved} onCancel={() => {}} />);
    const form = await fill(user);
    await user.selectOptions(within(form).getByLabelText(/^Priority/), '6');
    await user.selectOptions(within(form).getByLabelText(/^Queue scheme/), 'abc');
    expect(within(form).getByLabelText(/^Meter memory/)).toHaveValue('3');
    expect(within(form).getByLabelText(/^Average memory/)).toHaveValue('0.3');
    expect(within(form).getByLabelText(/^Reference rate/)).toHaveValue('10');
    // 240 Mbit/s: a 1,500-byte packet takes 50 µs; 6, 20 and 16 of them
    expect(within(form).getByLabelText(/^Q_min/)).toHaveAttribute('placeholder', '0.3');
    expect(within(form).getByLabelText(/^Q_base/)).toHaveAttribute('placeholder', '1');
    expect(within(form).getByLabelText(/^Gamma/)).toHaveAccessibleDescription(/falls per unit of activity above the average/);
    expect(within(form).getByLabelText(/^Gamma/)).toHaveAttribute('placeholder', '0.8');
    expect(within(form).queryByLabelText(/^Source prefix length/)).toBeNull();
    await user.selectOptions(within(form).getByLabelText(/^Aggregates/), 'source_prefix');
    await user.click(screen.getByRole('button', { name: 'Create slice' }));
    expect(within(form).getByLabelText(/^Source prefix length/)).toHaveAccessibleDescription(/need a prefix length/);
    await user.type(within(form).getByLabelText(/^Source prefix length/), '24');
    await user.type(within(form).getByLabelText(/^Q_base/), '2');
    await user.click(screen.getByRole('button', { name: 'Create slice' }));
    await waitFor(() => expect(saved).toHaveBeenCalledTimes(1));
    const post = calls.find((c) => c.method === 'POST' && c.path === '/api/v1/slices');
    expect(post?.body).toMatchObject({
      scheme: 'abc',
      abc: { meter_memory_s: 3, average_memory_s: 0.3, reference_rate_bps: 1e4, q_base_s: 0.002, key: 'source_prefix', prefix_length: 24 },
    });
    expect((post?.body as { abc: object }).abc).not.toHaveProperty('q_min_s');
  });

  it("shows the API's refusal of a 17th ABC memory on the meter memory input", async () => {
    const refused = {
      type: 'https://sliceportal.dev/problems/conflict', title: 'Conflict', status: 409,
      detail: "switch 'edge-1' holds ABC decay rows for 16 distinct abc.meter_memory_s values already (1, 2 s) and has no room for another; use one of them",
      field: 'body.abc.meter_memory_s',
    };
    api({ 'POST /api/v1/slices': () => ({ status: 409, body: refused }) });
    const user = userEvent.setup();
    renderWithProviders(<SliceForm canAct onSaved={() => {}} onCancel={() => {}} />);
    const form = await fill(user);
    await user.selectOptions(within(form).getByLabelText(/^Queue scheme/), 'abc');
    await user.click(screen.getByRole('button', { name: 'Create slice' }));
    await waitFor(() => expect(within(form).getByLabelText(/^Meter memory/)).toHaveAccessibleDescription(/16 distinct.*use one of them/));
  });

  it('disables submitting for a role that may not change slices', () => {
    api();
    renderWithProviders(<SliceForm canAct={false} onSaved={() => {}} onCancel={() => {}} />);
    expect(screen.getByRole('button', { name: 'Create slice' })).toBeDisabled();
    expect(screen.getByText('Your role may not change slices.')).toBeInTheDocument();
  });
});
