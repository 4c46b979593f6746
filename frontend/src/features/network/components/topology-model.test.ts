import type { Topology, TopologyLink } from '@/lib/api/schema';

import { hostsNodeId, switchNodeId, topologyGraph, utilisationTone } from './topology-model';

const MBIT = 1e6;

function link(id: number, switchId: number, overrides: Partial<TopologyLink> = {}): TopologyLink {
  return {
    id, name: `eth${id}`, switch_id: switchId, port: id, capacity_bps: 100 * MBIT, cable_id: null, far_switch_id: null, far_link_id: null,
    propagation_s: 0, host_ipv4_prefixes: [], host_vlan_ids: [], slice_count: 0, reserved_bps: 0, throughput_bps: null, utilisation: null,
    ...overrides,
  };
}

/** s1 —cable 7— s2, s1 with a host port (link 3), s2 unreachable. */
const topology: Topology = {
  switches: [
    { id: 1, name: 's1', kind: 'emulator', state: 'reachable', health: 'healthy', health_detail: 'in sync' },
    { id: 2, name: 's2', kind: 'bmv2', state: 'unreachable', health: 'down', health_detail: 'connection refused' },
  ],
  links: [
    link(1, 1, { cable_id: 7, far_switch_id: 2, far_link_id: 2, utilisation: 0.9, throughput_bps: 90 * MBIT }),
    link(2, 2, { cable_id: 7, far_switch_id: 1, far_link_id: 1, utilisation: 0.1, throughput_bps: 10 * MBIT }),
    link(3, 1, { host_ipv4_prefixes: ['10.1.0.0/16'], host_vlan_ids: [10], utilisation: 0.6 }),
  ],
  cables: [{ id: 7, name: 'c7', propagation_s: 0.002, a_link_id: 1, b_link_id: 2 }],
  live_window_s: 10,
};

describe('topologyGraph', () => {
  it('draws a node per switch coloured by health and one per host port with its hosts', () => {
    const graph = topologyGraph(topology);
    expect(graph.nodes.map((n) => n.id)).toEqual([switchNodeId(1), switchNodeId(2), hostsNodeId(3)]);
    const [s1, s2, hosts] = graph.nodes;
    expect(s1).toMatchObject({ kind: 'switch', name: 's1', tone: 'ok' });
    expect(s2).toMatchObject({ kind: 'switch', tone: 'bad', healthDetail: 'connection refused' });
    expect(hosts).toMatchObject({ kind: 'hosts', linkId: 3, hosts: ['10.1.0.0/16', 'VLAN 10'] });
  });

  it('draws a cable once, with both directions, coloured by its busiest one', () => {
    const { edges } = topologyGraph(topology);
    const cable = edges.find((e) => e.kind === 'cable')!;
    expect(cable).toMatchObject({ source: switchNodeId(1), target: switchNodeId(2), name: 'c7', propagationS: 0.002, tone: 'bad' });
    expect(cable.directions.map((d) => [d.linkId, d.from, d.tone])).toEqual([
      [1, 's1', 'bad'],
      [2, 's2', 'ok'],
    ]);
    const port = edges.find((e) => e.kind === 'hosts')!;
    expect(port).toMatchObject({ source: switchNodeId(1), target: hostsNodeId(3), tone: 'warn' });
    expect(edges).toHaveLength(2);
  });

  it('colours by utilisation: no live data is idle, not idle traffic', () => {
    expect(utilisationTone(null)).toBe('idle');
    expect(utilisationTone(0)).toBe('ok');
    expect(utilisationTone(0.5)).toBe('warn');
    expect(utilisationTone(0.8)).toBe('bad');
  });

  it("highlights a slice's links and the switches they touch", () => {
    const graph = topologyGraph(topology, new Set([3]));
    expect(graph.highlighting).toBe(true);
    expect(graph.edges.filter((e) => e.highlighted).map((e) => e.id)).toEqual(['port-3']);
    expect(graph.nodes.filter((n) => n.highlighted).map((n) => n.id)).toEqual([switchNodeId(1), hostsNodeId(3)]);
    expect(topologyGraph(topology).highlighting).toBe(false);
  });

  it('lays the nodes out apart, the same way every time', () => {
    const first = topologyGraph(topology).nodes.map((n) => [n.x, n.y]);
    expect(topologyGraph(topology).nodes.map((n) => [n.x, n.y])).toEqual(first);
    const [[x1, y1], [x2, y2]] = first as [[number, number], [number, number]];
    expect(Math.hypot(x1 - x2, y1 - y2)).toBeGreaterThan(100);
  });

  it('leaves out a link whose switch the read did not see yet', () => {
    const late = { ...topology, links: [...topology.links, link(9, 5)] };
    expect(topologyGraph(late).edges.map((e) => e.id)).toEqual(['cable-7', 'port-3']);
  });
});
