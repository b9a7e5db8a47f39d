import { readFileSync } from 'node:fs';

/**
 * A V8 heap snapshot (.heapsnapshot) read into flat arrays, enough to group objects by constructor
 * and to name what retains them. Used by bench/socket-heap.ts to find what each idle socket holds.
 */
export interface HeapGraph {
  /** Node count. */
  count: number;
  /** Per node: `type:name` (closures as `closure:<function name>`, strings as `string`). */
  label: string[];
  selfSize: Float64Array;
  /** Per node: first (non-weak) retainer node index and the edge's name, or -1. */
  retainer: Int32Array;
  retainerEdge: string[];
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Strings and numbers are many and nameless: grouped by type alone. */
const BY_TYPE = new Set(['string', 'concatenated string', 'sliced string', 'number', 'hidden', 'array', 'code']);

export function readHeapSnapshot(file: string): HeapGraph {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot;
  const { node_fields: nodeFields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = raw.snapshot.meta;
  const nodeWidth = nodeFields.length;
  const edgeWidth = edgeFields.length;
  const [typeAt, nameAt, sizeAt, edgesAt] = ['type', 'name', 'self_size', 'edge_count'].map((field) => nodeFields.indexOf(field)) as [
    number,
    number,
    number,
    number,
  ];
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((field) => edgeFields.indexOf(field)) as [number, number, number];
  const count = raw.nodes.length / nodeWidth;
  const label: string[] = new Array(count);
  const selfSize = new Float64Array(count);
  const retainer = new Int32Array(count).fill(-1);
  const retainerEdge: string[] = new Array(count).fill('');
  for (let node = 0; node < count; node += 1) {
    const type = nodeTypes[0][raw.nodes[node * nodeWidth + typeAt]!]!;
    const name = raw.strings[raw.nodes[node * nodeWidth + nameAt]!]!;
    label[node] = BY_TYPE.has(type) ? type : `${type}:${name.slice(0, 60)}`;
    selfSize[node] = raw.nodes[node * nodeWidth + sizeAt]!;
  }
  let edge = 0;
  for (let node = 0; node < count; node += 1) {
    const edges = raw.nodes[node * nodeWidth + edgesAt]!;
    for (let index = 0; index < edges; index += 1, edge += edgeWidth) {
      const edgeType = edgeTypes[0][raw.edges[edge + edgeTypeAt]!]!;
      if (edgeType === 'weak' || edgeType === 'shortcut') continue;
      const to = raw.edges[edge + toAt]! / nodeWidth;
      if (retainer[to] !== -1 || label[node] === 'synthetic:(GC roots)') continue;
      retainer[to] = node;
      const nameOrIndex = raw.edges[edge + edgeNameAt]!;
      retainerEdge[to] = edgeType === 'element' || edgeType === 'hidden' ? `[${nameOrIndex}]` : String(raw.strings[nameOrIndex]);
    }
  }
  return { count, label, selfSize, retainer, retainerEdge };
}

export interface LabelTotals {
  count: number;
  bytes: number;
}

export function totalsByLabel(graph: HeapGraph): Map<string, LabelTotals> {
  const totals = new Map<string, LabelTotals>();
  for (let node = 0; node < graph.count; node += 1) {
    const entry = totals.get(graph.label[node]!) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += graph.selfSize[node]!;
    totals.set(graph.label[node]!, entry);
  }
  return totals;
}

/** `label ← edge of retainer ← edge of its retainer …`, `depth` steps up. */
export function retainerPath(graph: HeapGraph, node: number, depth: number): string {
  const parts: string[] = [];
  let current = node;
  for (let step = 0; step < depth && graph.retainer[current]! >= 0; step += 1) {
    parts.push(`.${graph.retainerEdge[current]} of ${graph.label[graph.retainer[current]!]}`);
    current = graph.retainer[current]!;
  }
  return parts.join(' ← ');
}

/** For every node with `label`, its retainer path; the most common paths with their counts. */
export function commonRetainers(graph: HeapGraph, label: string, depth: number, top: number): [string, number][] {
  const paths = new Map<string, number>();
  for (let node = 0; node < graph.count; node += 1) {
    if (graph.label[node] !== label) continue;
    const key = retainerPath(graph, node, depth);
    paths.set(key, (paths.get(key) ?? 0) + 1);
  }
  return [...paths.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
}
