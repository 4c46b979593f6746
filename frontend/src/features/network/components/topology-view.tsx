/**
 * The network drawn with React Flow (@xyflow/react): switches coloured by health, cables and
 * host ports coloured by the live utilisation of their busiest direction. Every switch name and
 * every direction's label is a link to its page. Positions come from `topologyGraph`.
 */
import '@xyflow/react/dist/style.css';

import {
  Background,
  BaseEdge,
  Controls,
  EdgeLabelRenderer,
  Handle,
  Position,
  ReactFlow,
  getStraightPath,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import { useMemo } from 'react';
import { Link } from 'react-router';

import { paths } from '@/config/paths';
import type { Topology } from '@/lib/api/schema';
import { formatDelay, formatPercent } from '@/lib/format';

import { topologyGraph, type GraphEdge, type HostsNode, type SwitchNode, type Tone } from './topology-model';

type SwitchFlowNode = Node<{ node: SwitchNode; dimmed: boolean }, 'switch'>;
type HostsFlowNode = Node<{ node: HostsNode; dimmed: boolean }, 'hosts'>;
type FlowEdge = Edge<{ edge: GraphEdge; dimmed: boolean }, 'topology'>;

const TONE_COLOURS: Record<Tone, string> = { ok: 'var(--ok)', warn: 'var(--warn)', bad: 'var(--bad)', idle: 'var(--text-3)' };
export const HEALTH_LABELS = { healthy: 'healthy', degraded: 'degraded', down: 'unreachable', unknown: 'not contacted' } as const;

/** Edges meet at the centre of a node: one hidden handle each way. */
function CentreHandles() {
  return (
    <>
      <Handle type="source" position={Position.Top} className="topo-handle" isConnectable={false} />
      <Handle type="target" position={Position.Top} className="topo-handle" isConnectable={false} />
    </>
  );
}

function SwitchNodeView({ data }: NodeProps<SwitchFlowNode>) {
  const { node, dimmed } = data;
  return (
    <div
      className={`topo-node topo-switch ${node.highlighted ? 'is-highlighted' : ''} ${dimmed ? 'is-dimmed' : ''}`}
      style={{ borderColor: TONE_COLOURS[node.tone] }}
      title={node.healthDetail}
      data-testid={`topology-switch-${node.switchId}`}
    >
      <CentreHandles />
      <Link className="nodrag" to={paths.switch.href(node.switchId)}>
        {node.name}
      </Link>
      <span className="topo-health" style={{ color: TONE_COLOURS[node.tone] }}>
        {HEALTH_LABELS[node.health]}
      </span>
    </div>
  );
}

function HostsNodeView({ data }: NodeProps<HostsFlowNode>) {
  const { node, dimmed } = data;
  return (
    <div className={`topo-node topo-hosts ${node.highlighted ? 'is-highlighted' : ''} ${dimmed ? 'is-dimmed' : ''}`}>
      <CentreHandles />
      <span className="topo-hosts-title">hosts</span>
      <span className="topo-hosts-list">{node.hosts.length ? node.hosts.join(', ') : 'not declared'}</span>
    </div>
  );
}

function TopologyEdgeView({ id, sourceX, sourceY, targetX, targetY, data }: EdgeProps<FlowEdge>) {
  const [path, labelX, labelY] = getStraightPath({ sourceX, sourceY, targetX, targetY });
  if (!data) return null;
  const { edge, dimmed } = data;
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        style={{
          stroke: TONE_COLOURS[edge.tone],
          strokeWidth: edge.highlighted ? 6 : 3,
          strokeDasharray: edge.tone === 'idle' ? '6 4' : undefined,
          opacity: dimmed ? 0.25 : 1,
        }}
      />
      <EdgeLabelRenderer>
        <div
          className={`topo-edge-label nodrag nopan ${edge.highlighted ? 'is-highlighted' : ''} ${dimmed ? 'is-dimmed' : ''}`}
          style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          data-testid={`topology-edge-${edge.id}`}
        >
          {edge.directions.map((d) => (
            <Link key={d.linkId} to={paths.link.href(d.linkId)} aria-label={`Link ${d.name} of ${d.from}`}>
              {edge.kind === 'cable' ? `${d.from} → ` : ''}
              {d.name} <span style={{ color: TONE_COLOURS[d.tone] }}>{d.utilisation === null ? 'no live data' : formatPercent(d.utilisation, 2)}</span>
            </Link>
          ))}
          {edge.kind === 'cable' && <span className="muted">{edge.name} · {formatDelay(edge.propagationS)}</span>}
        </div>
      </EdgeLabelRenderer>
    </>
  );
}

const NODE_TYPES = { switch: SwitchNodeView, hosts: HostsNodeView };
const EDGE_TYPES = { topology: TopologyEdgeView };

export function TopologyView({ topology, highlightLinkIds }: { topology: Topology; highlightLinkIds: ReadonlySet<number> }) {
  const graph = useMemo(() => topologyGraph(topology, highlightLinkIds), [topology, highlightLinkIds]);
  const nodes = graph.nodes.map(
    (node): SwitchFlowNode | HostsFlowNode =>
      node.kind === 'switch'
        ? { id: node.id, type: 'switch', position: { x: node.x, y: node.y }, data: { node, dimmed: graph.highlighting && !node.highlighted } }
        : { id: node.id, type: 'hosts', position: { x: node.x, y: node.y }, data: { node, dimmed: graph.highlighting && !node.highlighted } },
  );
  const edges = graph.edges.map(
    (edge): FlowEdge => ({ id: edge.id, type: 'topology', source: edge.source, target: edge.target, data: { edge, dimmed: graph.highlighting && !edge.highlighted } }),
  );
  return (
    <div className="topology-canvas" role="figure" aria-label="Network topology">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        edgeTypes={EDGE_TYPES}
        nodesConnectable={false}
        elementsSelectable={false}
        fitView
        minZoom={0.2}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

export function TopologyLegend() {
  return (
    <div className="topo-legend small">
      <span>Links by live utilisation:</span>
      <span style={{ color: TONE_COLOURS.ok }}>■ below 50 %</span>
      <span style={{ color: TONE_COLOURS.warn }}>■ 50–80 %</span>
      <span style={{ color: TONE_COLOURS.bad }}>■ 80 % and above</span>
      <span style={{ color: TONE_COLOURS.idle }}>┅ no live data</span>
      <span>Switches by health: border in the same colours (grey: not contacted yet).</span>
    </div>
  );
}
