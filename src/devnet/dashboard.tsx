/**
 * The `svc devnet up` terminal dashboard: a pure ink component of a DevnetView snapshot. It
 * holds no state and does no I/O, so tests render hand-built views; dashboard-app.tsx feeds it
 * live snapshots.
 */
import type { ReactNode } from 'react';
import { Box, Text } from 'ink';
import { clockTime, formatBalance, isDown, mempoolText, shortAddress, shortHash, statusColor } from './dashboard-format.js';
import type { DevnetView, EventLine, NodeView, ProcessView, ValidatorView } from './view.js';

/** How many of the most recent events the dashboard lists. */
export const EVENT_ROWS = 8;
/**
 * Rows shown per table before "… N more": ink redraws by erasing its previous frame, which
 * breaks once a frame is taller than the terminal, so a 64-validator devnet must not list all.
 */
export const TABLE_ROWS = 16;

/** Widths (gaps included) sum to 44 for processes, leaving the log column 56 of 100 columns. */
const PROC = { name: 14, status: 12, pid: 8, restarts: 10 } as const;
const NODE = { index: 6, role: 11, slot: 11, height: 8, root: 14, finalized: 11, peers: 11 } as const;
const VAL = { index: 7, address: 15, proposed: 10, attested: 10, balance: 21 } as const;

/** The dashboard for one snapshot of a running devnet. */
export function Dashboard({ view }: { view: DevnetView }): ReactNode {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold color="cyan">
          svc devnet
        </Text>
        <Text dimColor>{'   chain '}</Text>
        <Text bold>{view.chainId}</Text>
        <Text dimColor>{'   dir '}</Text>
        <Text>{view.dir}</Text>
      </Text>
      <Endpoints view={view} />
      <ChainStatus view={view} />
      <Nodes nodes={view.nodes} />
      <Processes processes={view.processes} />
      <Validators validators={view.validators} />
      <Events events={view.events} />
      <Box marginTop={1}>
        <Text dimColor>Ctrl-C stops the devnet</Text>
      </Box>
    </Box>
  );
}

function Endpoints({ view }: { view: DevnetView }): ReactNode {
  const e = view.endpoints;
  // Padded from the actual URLs rather than truncated: endpoints are there to be copied whole.
  const left = Math.max(e.execution.length, e.beacon.length);
  const row = (k1: string, v1: string, k2: string, v2: string) => (
    <Text>
      <Text dimColor>{k1.padEnd(10)}</Text>
      {v1.padEnd(left + 3)}
      <Text dimColor>{k2.padEnd(9)}</Text>
      {v2}
    </Text>
  );
  return (
    <Box marginTop={1} flexDirection="column">
      {row('execution', e.execution, 'json-rpc', e.rpc)}
      {row('beacon', e.beacon, 'ws', e.ws)}
    </Box>
  );
}

function ChainStatus({ view }: { view: DevnetView }): ReactNode {
  const head = view.head;
  return (
    <Box marginTop={1} flexDirection="column">
      <Text>
        <Text dimColor>slot </Text>
        <Text bold>{view.slot}</Text>
        <Text dimColor>{'   epoch '}</Text>
        <Text bold>{view.epoch}</Text>
        <Text dimColor>{'   head '}</Text>
        {head === null ? (
          <Text dimColor>none yet</Text>
        ) : (
          <Text>
            slot {head.slot}
            <Text dimColor>{' · height '}</Text>
            {head.index}
            <Text dimColor>{' · '}</Text>
            {shortHash(head.root)}
          </Text>
        )}
      </Text>
      <Text>
        <Text dimColor>justified epoch </Text>
        <Text bold>{view.justifiedEpoch}</Text>
        <Text dimColor>{'   finalized epoch '}</Text>
        <Text bold>{view.finalizedEpoch}</Text>
        <Text dimColor>{'   mempool '}</Text>
        {view.mempool === null ? <Text color="red">{mempoolText(null)}</Text> : <Text>{mempoolText(view.mempool)}</Text>}
        <Text dimColor>{'   peers '}</Text>
        <Text>{view.peers}</Text>
      </Text>
    </Box>
  );
}

/** Each node's head, finality and peers; a single-node devnet has nothing to compare, so the section is left out. */
function Nodes({ nodes }: { nodes: NodeView[] }): ReactNode {
  if (nodes.length < 2) return null;
  const shown = nodes.slice(0, TABLE_ROWS);
  const num = (v: number | null) => (v === null ? '?' : String(v));
  return (
    <Section title="nodes">
      <Box>
        <Cell width={NODE.index} dim>NODE</Cell>
        <Cell width={NODE.role} dim>ROLE</Cell>
        <Cell width={NODE.slot} right dim>HEAD SLOT</Cell>
        <Cell width={NODE.height} right dim>HEIGHT</Cell>
        <Cell width={NODE.root} dim>HEAD</Cell>
        <Cell width={NODE.finalized} right dim>FINALIZED</Cell>
        <Cell width={NODE.peers} right dim>PEERS B/E</Cell>
        <Text dimColor>VALIDATORS</Text>
      </Box>
      {shown.map((n) => (
        <Box key={n.index}>
          <Cell width={NODE.index}>{n.index}</Cell>
          <Cell width={NODE.role} dim={n.role === 'follower'}>{n.role === 'follower' ? 'read-only' : 'producer'}</Cell>
          <Cell width={NODE.slot} right color={n.head === null ? 'red' : undefined}>{n.head ? n.head.slot : '?'}</Cell>
          <Cell width={NODE.height} right>{n.head ? n.head.index : '?'}</Cell>
          <Cell width={NODE.root}>{n.head ? shortHash(n.head.root) : '?'}</Cell>
          <Cell width={NODE.finalized} right>{num(n.finalized_epoch)}</Cell>
          <Cell width={NODE.peers} right color={n.peers.beacon === 0 || n.peers.execution === 0 ? 'yellow' : undefined}>{`${num(n.peers.beacon)}/${num(n.peers.execution)}`}</Cell>
          <Box flexGrow={1} flexShrink={1}>
            <Text wrap="truncate-end">{n.validators.length > 0 ? n.validators.join(', ') : '-'}</Text>
          </Box>
        </Box>
      ))}
      <More hidden={nodes.length - shown.length} />
    </Section>
  );
}

/** One fixed-width table cell whose last two columns are the gap; never wraps, so every row stays one line. */
function Cell({ width, right, children, color, bold, dim }: { width: number; right?: boolean; children: ReactNode; color?: string; bold?: boolean; dim?: boolean }): ReactNode {
  return (
    <Box width={width} flexShrink={0} justifyContent={right ? 'flex-end' : 'flex-start'} paddingRight={2}>
      <Text wrap="truncate-end" color={color} bold={bold} dimColor={dim}>
        {children}
      </Text>
    </Box>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }): ReactNode {
  return (
    <Box marginTop={1} flexDirection="column">
      <Text bold>{title}</Text>
      {children}
    </Box>
  );
}

function More({ hidden }: { hidden: number }): ReactNode {
  return hidden > 0 ? <Text dimColor>… {hidden} more</Text> : null;
}

function Processes({ processes }: { processes: ProcessView[] }): ReactNode {
  const shown = processes.slice(0, TABLE_ROWS);
  // Every down process is listed here, including any cut from the table, with its full log path.
  const down = processes.filter((p) => isDown(p.status));
  return (
    <Section title="processes">
      {processes.length === 0 ? (
        <Text dimColor>none yet</Text>
      ) : (
        <>
          <Box>
            <Cell width={PROC.name} dim>NAME</Cell>
            <Cell width={PROC.status} dim>STATUS</Cell>
            <Cell width={PROC.pid} dim>PID</Cell>
            <Cell width={PROC.restarts} dim>RESTARTS</Cell>
            <Text dimColor>LOG</Text>
          </Box>
          {shown.map((p) => (
            <Box key={p.name}>
              <Cell width={PROC.name} bold={isDown(p.status)}>{p.name}</Cell>
              <Cell width={PROC.status} color={statusColor(p.status)} bold={isDown(p.status)}>
                {p.status}
              </Cell>
              <Cell width={PROC.pid}>{p.pid ?? '-'}</Cell>
              <Cell width={PROC.restarts}>{p.restarts}</Cell>
              <Box flexGrow={1} flexShrink={1} minWidth={10}>
                {/* truncate-start keeps the file name, the part that tells logs apart. */}
                <Text wrap="truncate-start" dimColor={!isDown(p.status)} color={isDown(p.status) ? 'red' : undefined}>
                  {p.log}
                </Text>
              </Box>
            </Box>
          ))}
          <More hidden={processes.length - shown.length} />
          {down.map((p) => (
            // The path gets a line of its own so it is never truncated and can be copied whole.
            <Box key={p.name} flexDirection="column">
              <Text color="red" bold>
                ! {p.name} {p.status}
                {p.restarts > 0 ? ` after ${p.restarts} restart${p.restarts === 1 ? '' : 's'}` : ''}, log:
              </Text>
              <Text color="red">{`  ${p.log}`}</Text>
            </Box>
          ))}
        </>
      )}
    </Section>
  );
}

/** Balance text for a table cell: a malformed amount must not take the whole dashboard down. */
function balanceCell(balance: string | null): string {
  if (balance === null) return '…';
  try {
    return formatBalance(balance);
  } catch {
    return '?';
  }
}

function Validators({ validators }: { validators: ValidatorView[] }): ReactNode {
  const shown = validators.slice(0, TABLE_ROWS);
  return (
    <Section title="validators">
      {validators.length === 0 ? (
        <Text dimColor>none</Text>
      ) : (
        <>
          <Box>
            <Cell width={VAL.index} dim>INDEX</Cell>
            <Cell width={VAL.address} dim>ADDRESS</Cell>
            <Cell width={VAL.proposed} right dim>PROPOSED</Cell>
            <Cell width={VAL.attested} right dim>ATTESTED</Cell>
            <Cell width={VAL.balance} right dim>BALANCE (tokens)</Cell>
          </Box>
          {shown.map((v) => (
            <Box key={v.index}>
              <Cell width={VAL.index}>{v.index}</Cell>
              <Cell width={VAL.address}>{shortAddress(v.address)}</Cell>
              <Cell width={VAL.proposed} right>{v.proposed}</Cell>
              <Cell width={VAL.attested} right>{v.attested}</Cell>
              <Cell width={VAL.balance} right>{balanceCell(v.balance)}</Cell>
            </Box>
          ))}
          <More hidden={validators.length - shown.length} />
        </>
      )}
    </Section>
  );
}

const KIND_COLOR: Partial<Record<EventLine['kind'], string>> = {
  error: 'red',
  crash: 'red',
  restart: 'yellow',
  finalized: 'green',
  started: 'cyan',
};

function Events({ events }: { events: EventLine[] }): ReactNode {
  const recent = events.slice(-EVENT_ROWS);
  return (
    <Section title="recent events (UTC)">
      {recent.length === 0 ? (
        <Text dimColor>none yet</Text>
      ) : (
        recent.map((e, i) => (
          // Events carry no id and may repeat verbatim; rows hold no state, so position is key enough.
          <Box key={i}>
            <Cell width={10} dim>{clockTime(e.time)}</Cell>
            <Cell width={11} color={KIND_COLOR[e.kind]}>{e.kind}</Cell>
            <Box flexGrow={1} flexShrink={1}>
              <Text wrap="truncate-end">{e.text}</Text>
            </Box>
          </Box>
        ))
      )}
    </Section>
  );
}
