import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import type { LinkPublic } from '@/lib/api/schema';
import { mockFetch, now, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { LINK_LIMITS, LinkForm, QUEUE_LIMITS, VLAN_LIMITS, parseVlans, validateLink } from './link-form';

const MBIT = 1e6;
const link: LinkPublic = {
  id: 3, switch_id: 1, name: 'eth1', description: '', port: 1, capacity_bps: 100 * MBIT, queue_count: 8,
  model: 'netcalc', mtu_bytes: 1500, frame_overhead_bytes: 0, cable_id: null, cable_end: null, host_ipv4_prefixes: [], host_vlan_ids: [],
  created_at: now, updated_at: now,
};
const values = {
  switchId: '1', name: 'eth1', description: '', port: '1', capacityMbps: '100', queueCount: '8', model: '' as const, mtu: '', frameOverhead: '0',
  hostPrefixes: '', hostVlans: '',
};

describe('LinkForm', () => {
  beforeEach(signInForTests);

  it('keeps a queue for best effort: 2 to 8 queues', () => {
    expect(validateLink({ ...values, queueCount: '1' }, true).queue_count).toMatch(/from 2 to 8/);
    expect(validateLink({ ...values, queueCount: '2' }, true).queue_count).toBeUndefined();
    expect(validateLink({ ...values, queueCount: '9' }, true).queue_count).toMatch(/from 2 to 8/);
  });

  it('takes capacities from 1 bit/s to 1 Pbit/s and MTUs of an IPv4 packet, as the API does', () => {
    expect(validateLink({ ...values, capacityMbps: '0.000001' }, true).capacity_bps).toBeUndefined();
    expect(validateLink({ ...values, capacityMbps: '0.0000009' }, true).capacity_bps).toMatch(/1 bit\/s/);
    expect(validateLink({ ...values, capacityMbps: '1000000000' }, true).capacity_bps).toBeUndefined();
    expect(validateLink({ ...values, capacityMbps: '1000000001' }, true).capacity_bps).toMatch(/1 Pbit\/s/);
    expect(validateLink({ ...values, mtu: '63' }, true).mtu_bytes).toMatch(/from 64 to 65535/);
    expect(validateLink({ ...values, mtu: '65535' }, true).mtu_bytes).toBeUndefined();
  });

  it('has the limits of the OpenAPI document', () => {
    type Schema = { properties: Record<string, { anyOf?: Record<string, unknown>[] } & Record<string, unknown>> };
    const openapi: unknown = JSON.parse(readFileSync(resolve(process.cwd(), 'openapi.json'), 'utf8'));
    const props = (openapi as { components: { schemas: Record<string, Schema> } }).components.schemas.LinkCreate!.properties;
    const prop = (name: string) => {
      const p = props[name]!;
      return (p.anyOf?.find((x) => x.type !== 'null') ?? p) as Record<string, unknown>;
    };
    expect([prop('capacity_bps').minimum, prop('capacity_bps').maximum]).toEqual([LINK_LIMITS.capacityMinBps, LINK_LIMITS.capacityMaxBps]);
    expect([prop('mtu_bytes').minimum, prop('mtu_bytes').maximum]).toEqual([LINK_LIMITS.mtuMin, LINK_LIMITS.mtuMax]);
    expect([prop('port').minimum, prop('port').maximum]).toEqual([0, LINK_LIMITS.portMax]);
    expect([prop('queue_count').minimum, prop('queue_count').maximum]).toEqual([QUEUE_LIMITS.min, QUEUE_LIMITS.max]);
  });

  it('says what the capacity counts, frame bytes by default, and sends the line rate as 24 bytes', async () => {
    const calls = mockFetch({
      'GET /api/v1/switches': { data: [], count: 0 },
      'PATCH /api/v1/links/3': (r) => ({ body: { ...link, ...(r.body as object) } }),
    });
    const done = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(<LinkForm link={link} onDone={done} onCancel={() => {}} />);
    const counts = screen.getByLabelText(/^Capacity counts/);
    expect(within(counts).getAllByRole('option').map((o) => o.textContent)).toEqual(['frame bytes (0)', 'line rate (24)']);
    expect(counts).toHaveValue('0');
    await user.selectOptions(counts, 'line rate (24)');
    await user.click(screen.getByRole('button', { name: 'Save link' }));
    await waitFor(() => expect(done).toHaveBeenCalledTimes(1));
    const patch = calls.find((c) => c.method === 'PATCH');
    expect(patch?.body).toMatchObject({ frame_overhead_bytes: 24, queue_count: 8 });
    expect(done.mock.calls[0]?.[0]).toMatchObject({ frame_overhead_bytes: 24 });
  });

  it('checks the hosts behind a port as the API does: IPv4 prefixes without host bits, VLANs 1–4094, each once', () => {
    expect(validateLink({ ...values, hostPrefixes: '10.0.0.0/24, 10.1.0.0/16' }, true).host_ipv4_prefixes).toBeUndefined();
    expect(validateLink({ ...values, hostPrefixes: '10.0.0.1/24' }, true).host_ipv4_prefixes).toMatch(/host bits/);
    expect(validateLink({ ...values, hostPrefixes: '10.0.0.0/24 10.0.0.0/24' }, true).host_ipv4_prefixes).toMatch(/twice/);
    expect(parseVlans('20, 10')).toEqual([10, 20]);
    expect(parseVlans('0')).toMatch(/not a VLAN/);
    expect(parseVlans('4095')).toMatch(/not a VLAN/);
    expect(parseVlans('7 7')).toMatch(/twice/);
    expect(validateLink({ ...values, hostVlans: 'x' }, true).host_vlan_ids).toMatch(/not a VLAN/);
    type Schema = { properties: Record<string, { items: { minimum: number; maximum: number } }> };
    const openapi: unknown = JSON.parse(readFileSync(resolve(process.cwd(), 'openapi.json'), 'utf8'));
    const vlans = (openapi as { components: { schemas: Record<string, Schema> } }).components.schemas.LinkCreate!.properties.host_vlan_ids!.items;
    expect([vlans.minimum, vlans.maximum]).toEqual([VLAN_LIMITS.min, VLAN_LIMITS.max]);
  });

  it('sends the hosts of a port that faces hosts, and offers none on a cable\'s end', async () => {
    const calls = mockFetch({
      'GET /api/v1/switches': { data: [], count: 0 },
      'PATCH /api/v1/links/3': (r) => ({ body: { ...link, ...(r.body as object) } }),
    });
    const user = userEvent.setup();
    const { unmount } = renderWithProviders(<LinkForm link={link} onDone={() => {}} onCancel={() => {}} />);
    await user.type(screen.getByLabelText('Host prefixes'), '10.5.0.0/16');
    await user.type(screen.getByLabelText('Host VLANs'), '30 20');
    await user.click(screen.getByRole('button', { name: 'Save link' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toMatchObject({ host_ipv4_prefixes: ['10.5.0.0/16'], host_vlan_ids: [20, 30] });
    unmount();
    renderWithProviders(<LinkForm link={{ ...link, cable_id: 4, cable_end: 'a' }} onDone={() => {}} onCancel={() => {}} />);
    expect(screen.queryByLabelText('Host prefixes')).toBeNull();
  });
});
