/**
 * The topology document (`GET /topology`) as a graph to draw: a node per switch, coloured by
 * health; a node per port that faces hosts (its prefixes and VLANs); an edge per cable with its
 * two directions (each its own link, utilisation and page), and an edge from a switch to each of
 * its host ports. Edges take the colour of their busiest direction. A slice's links, when given,
 * are highlighted and the rest dimmed. Positions come from d3-force, run to rest here, so the
 * drawing is the same on every render.
 */
import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, type SimulationNodeDatum } from 'd3-force';

import type { SwitchHealth, Topology, TopologyLink } from '@/lib/api/schema';

export type Tone = 'ok' | 'warn' | 'bad' | 'idle';

/** Utilisation at or above which a direction is busy (warn) or congested (bad). */
export const UTILISATION_LEVELS = { warn: 0.5, bad: 0.8 } as const;

export function utilisationTone(utilisation: number | null): Tone {
  if (utilisation === null) return 'idle';
  if (utilisation >= UTILISATION_LEVELS.bad) return 'bad';
  if (utilisation >= UTILISATION_LEVELS.warn) return 'warn';
  return 'ok';
}

export const HEALTH_TONES: Record<SwitchHealth, Tone> = { healthy: 'ok', degraded: 'warn', down: 'bad', unknown: 'idle' };

/** One direction of an edge: a link, from the switch it leaves. */
export interface Direction {
  linkId: number;
  name: string;
  from: string;
  utilisation: number | null;
  throughputBps: number | null;
  capacityBps: number;
  tone: Tone;
}

export interface SwitchNode {
  kind: 'switch';
  id: string;
  switchId: number;
  name: string;
  health: SwitchHealth;
  healthDetail: string;
  tone: Tone;
  highlighted: boolean;
  x: number;
  y: number;
}

export interface HostsNode {
  kind: 'hosts';
  id: string;
  linkId: number;
  /** The prefixes and VLANs behind the port, or empty when none are declared. */
  hosts: string[];
  highlighted: boolean;
  x: number;
  y: number;
}

export type GraphNode = SwitchNode | HostsNode;

export interface GraphEdge {
  id: string;
  kind: 'cable' | 'hosts';
  source: string;
  target: string;
  /** A cable's name; a host port's link name. */
  name: string;
  propagationS: number;
  directions: Direction[];
  tone: Tone;
  highlighted: boolean;
}

export interface TopologyGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Whether a slice's path is shown: what is not on it is dimmed. */
  highlighting: boolean;
}

export const switchNodeId = (switchId: number) => `switch-${switchId}`;
export const hostsNodeId = (linkId: number) => `hosts-${linkId}`;

const TONE_ORDER: Tone[] = ['idle', 'ok', 'warn', 'bad'];

function busiest(directions: Direction[]): Tone {
  return directions.reduce<Tone>((worst, d) => (TONE_ORDER.indexOf(d.tone) > TONE_ORDER.indexOf(worst) ? d.tone : worst), 'idle');
}

function hostsOf(link: TopologyLink): string[] {
  return [...link.host_ipv4_prefixes, ...link.host_vlan_ids.map((vlan) => `VLAN ${vlan}`)];
}

export function topologyGraph(topology: Topology, highlightLinkIds: ReadonlySet<number> = new Set()): TopologyGraph {
  const switchName = new Map(topology.switches.map((s) => [s.id, s.name] as const));
  const links = new Map(topology.links.map((l) => [l.id, l] as const));
  const direction = (link: TopologyLink): Direction => ({
    linkId: link.id,
    name: link.name,
    from: switchName.get(link.switch_id) ?? `switch ${link.switch_id}`,
    utilisation: link.utilisation,
    throughputBps: link.throughput_bps,
    capacityBps: link.capacity_bps,
    tone: utilisationTone(link.utilisation),
  });
  const onPath = new Set<number>();
  const edges: GraphEdge[] = [];
  for (const cable of topology.cables) {
    const a = links.get(cable.a_link_id);
    const b = links.get(cable.b_link_id);
    if (!a || !b) continue; // read while the cable was being made or removed
    const directions = [direction(a), direction(b)];
    const highlighted = directions.some((d) => highlightLinkIds.has(d.linkId));
    if (highlighted) onPath.add(a.switch_id).add(b.switch_id);
    edges.push({
      id: `cable-${cable.id}`,
      kind: 'cable',
      source: switchNodeId(a.switch_id),
      target: switchNodeId(b.switch_id),
      name: cable.name,
      propagationS: cable.propagation_s,
      directions,
      tone: busiest(directions),
      highlighted,
    });
  }
  const hostPorts = topology.links.filter((l) => l.cable_id === null);
  for (const link of hostPorts) {
    const directions = [direction(link)];
    const highlighted = highlightLinkIds.has(link.id);
    if (highlighted) onPath.add(link.switch_id);
    edges.push({
      id: `port-${link.id}`,
      kind: 'hosts',
      source: switchNodeId(link.switch_id),
      target: hostsNodeId(link.id),
      name: link.name,
      propagationS: 0,
      directions,
      tone: busiest(directions),
      highlighted,
    });
  }
  const nodes: GraphNode[] = [
    ...topology.switches.map(
      (s): SwitchNode => ({
        kind: 'switch',
        id: switchNodeId(s.id),
        switchId: s.id,
        name: s.name,
        health: s.health,
        healthDetail: s.health_detail,
        tone: HEALTH_TONES[s.health],
        highlighted: onPath.has(s.id),
        x: 0,
        y: 0,
      }),
    ),
    ...hostPorts.map(
      (l): HostsNode => ({ kind: 'hosts', id: hostsNodeId(l.id), linkId: l.id, hosts: hostsOf(l), highlighted: highlightLinkIds.has(l.id), x: 0, y: 0 }),
    ),
  ];
  const drawn = new Set(nodes.map((n) => n.id));
  const joined = edges.filter((e) => drawn.has(e.source) && drawn.has(e.target)); // links of a switch made after the read
  layOut(nodes, joined);
  return { nodes, edges: joined, highlighting: highlightLinkIds.size > 0 };
}

/** Distances that leave room for the edge labels between switches and for the host nodes. */
const LAYOUT = { cable: 260, hosts: 140, charge: -1200, collide: 80, ticks: 300 } as const;

interface Body extends SimulationNodeDatum {
  node: GraphNode;
}

/** Place `nodes` with a force simulation run to rest (deterministic: d3-force seeds its own
 * random source and starts from a fixed spiral). */
function layOut(nodes: GraphNode[], edges: GraphEdge[]): void {
  const bodies: Body[] = nodes.map((node) => ({ node }));
  const index = new Map(bodies.map((b) => [b.node.id, b] as const));
  const springs = edges.map((e) => ({ source: index.get(e.source)!, target: index.get(e.target)!, kind: e.kind }));
  forceSimulation(bodies)
    .force('link', forceLink(springs).distance((s) => LAYOUT[s.kind]))
    .force('charge', forceManyBody().strength(LAYOUT.charge))
    .force('collide', forceCollide(LAYOUT.collide))
    .force('center', forceCenter(0, 0))
    .stop()
    .tick(LAYOUT.ticks);
  for (const body of bodies) {
    body.node.x = Math.round(body.x ?? 0);
    body.node.y = Math.round(body.y ?? 0);
  }
}
