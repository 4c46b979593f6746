/**
 * The network: an operator wires the seeded switch to a second one with a cable made on the
 * topology page, sees both switches and every link drawn, follows a link's label to its page,
 * and opens a slice's links on the topology from the slice's page. Runs after the other specs
 * (file order): the second switch, which nothing answers for, is down from then on.
 */
import { expect, portal, shot, sliceId, test } from './support';

test('the topology draws the switches and links, wires a cable and opens a link', async ({ page, signInAs, api }) => {
  const post = async (path: string, body: object) => {
    const response = await api.post(path, { data: body });
    expect(response.status(), `${path}: ${await response.text()}`).toBe(201);
    return (await response.json()) as { id: number; name: string };
  };
  const core = await post('/api/v1/switches', { name: 'core-1', address: '127.0.0.2:9', kind: 'emulator' });
  await post('/api/v1/links', { switch_id: portal.switchId, name: 'edge-1/eth2', port: 2, capacity_bps: 1e9 });
  await post('/api/v1/links', { switch_id: core.id, name: 'core-1/eth1', port: 1, capacity_bps: 1e9 });
  const hosts = await api.patch(`/api/v1/links/${portal.linkId}`, { data: { host_ipv4_prefixes: ['10.1.0.0/16', '10.2.0.0/16', '10.3.0.0/16'] } });
  expect(hosts.status()).toBe(200);

  await signInAs('operator');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Topology' }).click();
  await expect(page.getByRole('heading', { name: 'Topology', level: 1 })).toBeVisible();
  await page.getByRole('button', { name: 'New cable' }).click();
  const form = page.getByRole('form', { name: 'New cable' });
  await form.getByLabel(/^Name/).fill('edge-core');
  await form.getByLabel(/^Propagation delay/).fill('1');
  await form.getByLabel(/^End A/).selectOption({ label: 'edge-1 · edge-1/eth2 (port 2)' });
  await form.getByLabel(/^End B/).selectOption({ label: 'core-1 · core-1/eth1 (port 1)' });
  await form.getByRole('button', { name: 'Add cable' }).click();
  await expect(form).toHaveCount(0);

  const figure = page.getByRole('figure', { name: 'Network topology' });
  await expect(figure.getByTestId(`topology-switch-${portal.switchId}`)).toContainText('edge-1');
  await expect(figure.getByTestId(`topology-switch-${core.id}`)).toContainText('core-1');
  await expect(figure.getByRole('link', { name: 'Link edge-1/eth2 of edge-1' })).toBeVisible();
  await expect(figure.getByRole('link', { name: 'Link core-1/eth1 of core-1' })).toBeVisible();
  await expect(figure.getByText('10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16')).toBeVisible();
  await expect(page.getByRole('table', { name: 'Cables' })).toContainText('edge-core');
  if (portal.telemetry) {
    // the seeded slices carry traffic: the host port's label shows a live share, not "no live data"
    await expect(figure.getByRole('link', { name: 'Link edge-1/eth1 of edge-1' })).toContainText('%');
  }
  await shot(page, '18-topology');

  await figure.getByRole('link', { name: 'Link edge-1/eth1 of edge-1' }).click();
  await expect(page).toHaveURL(new RegExp(`/links/${portal.linkId}$`));
  await expect(page.getByRole('heading', { name: /edge-1\/eth1/, level: 1 })).toBeVisible();
  await expect(page.getByTestId('link-faces')).toContainText('10.1.0.0/16');
});

test("a slice's links are highlighted on the topology from its page", async ({ page, signInAs, api }) => {
  const id = await sliceId(api, 'DC');
  await signInAs('viewer');
  await page.goto(`/slices/${id}`);
  await page.getByRole('link', { name: 'On the topology' }).click();
  await expect(page).toHaveURL(new RegExp(`/topology\\?slice=${id}$`));
  await expect(page.getByTestId('topology-slice')).toContainText('DC');
  await expect(page.getByTestId(`topology-edge-port-${portal.linkId}`)).toHaveClass(/is-highlighted/);
  const cables = (await (await api.get('/api/v1/cables', { params: { q: 'edge-core' } })).json()) as { data: { id: number }[] };
  await expect(page.getByTestId(`topology-edge-cable-${cables.data[0]!.id}`)).not.toHaveClass(/is-highlighted/);
  await shot(page, '19-topology-slice');
});
