/**
 * A phase's status over a window, in SVG: one band per status interval (colour and, in its
 * tooltip, the status word), stale intervals and spans with no record hatched, manifest changes as
 * markers, the moment being viewed as a line. Clicking picks a moment (time travel); the labelled
 * time field beside it does the same from the keyboard.
 */
import { useRef, useState, type PointerEvent } from 'react';
import { formatTime } from './status.tsx';

export interface TimelineInterval {
  status: string;
  from: string;
  to: string | null;
  stale: boolean;
  staleReason: string | null;
  message: string;
  /** The word shown for the band (default: the status), e.g. "unreachable" on a cluster's timeline. */
  label?: string;
}

export interface TimelineProps {
  intervals: TimelineInterval[];
  from: number;
  to: number;
  markers: { at: string; label: string }[];
  at: number | undefined;
  /** When the phase was first seen: before it, nothing is missing, so nothing is hatched. */
  firstSeen: number;
  onPick: (at: Date) => void;
  /** Dragging across the timeline zooms to the span dragged over; without it, dragging does nothing. */
  onZoom?: (from: Date, to: Date) => void;
  label: string;
  /** What a span with no interval means here. @default "no record (phaselog not observing)" */
  gapLabel?: string;
}

const pct = (value: number, from: number, to: number) => `${(((value - from) / (to - from)) * 100).toFixed(3)}%`;

function ticks(from: number, to: number): number[] {
  const steps = [60_000, 5 * 60_000, 15 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 86_400_000, 7 * 86_400_000];
  const step = steps.find((s) => (to - from) / s <= 8) ?? 7 * 86_400_000;
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t < to; t += step) out.push(t);
  return out;
}

function tickLabel(t: number, span: number): string {
  const iso = new Date(t).toISOString();
  return span > 2 * 86_400_000 ? iso.slice(5, 10) : iso.slice(11, 16);
}

/** Spans of the window no interval covers: nothing was recorded then. */
function gapsOf(intervals: TimelineInterval[], from: number, to: number): [number, number][] {
  const gaps: [number, number][] = [];
  let cursor = from;
  const sorted = intervals
    .map((i) => [Date.parse(i.from), i.to ? Date.parse(i.to) : to] as const)
    .sort((a, b) => a[0] - b[0]);
  for (const [start, end] of sorted) {
    if (start > cursor) gaps.push([cursor, Math.min(start, to)]);
    cursor = Math.max(cursor, end);
  }
  if (cursor < to) gaps.push([cursor, to]);
  return gaps.filter(([a, b]) => b > a);
}

export function Timeline({
  intervals,
  from,
  to,
  markers,
  at,
  firstSeen,
  onPick,
  onZoom,
  label,
  gapLabel = 'no record (phaselog not observing)',
}: TimelineProps) {
  const drag = useRef<number | undefined>(undefined);
  const [selection, setSelection] = useState<[number, number] | undefined>();
  const timeAt = (event: PointerEvent<SVGSVGElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    return from + Math.min(1, Math.max(0, (event.clientX - box.left) / box.width)) * (to - from);
  };
  const down = (event: PointerEvent<SVGSVGElement>) => {
    drag.current = timeAt(event);
    event.currentTarget.setPointerCapture(event.pointerId);
  };
  const move = (event: PointerEvent<SVGSVGElement>) => {
    if (drag.current !== undefined && onZoom) setSelection([drag.current, timeAt(event)]);
  };
  const up = (event: PointerEvent<SVGSVGElement>) => {
    const start = drag.current;
    drag.current = undefined;
    setSelection(undefined);
    if (start === undefined) return;
    const end = timeAt(event);
    // A drag over less than 1% of the window is a click.
    if (onZoom && Math.abs(end - start) > (to - from) / 100)
      onZoom(new Date(Math.min(start, end)), new Date(Math.max(start, end)));
    else onPick(new Date(end));
  };
  const clip = (t: number) => Math.min(to, Math.max(from, t));
  return (
    <svg
      className="timeline"
      width="100%"
      height="58"
      role="img"
      aria-label={label}
      onPointerDown={down}
      onPointerMove={move}
      onPointerUp={up}
    >
      <defs>
        <pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
          <line x1="0" y1="0" x2="0" y2="6" stroke="rgba(0,0,0,0.45)" strokeWidth="2" />
        </pattern>
      </defs>
      <rect x="0" y="8" width="100%" height="26" className="tl-bg" />
      {gapsOf(intervals, Math.min(to, Math.max(from, firstSeen)), to).map(([a, b]) => (
        <rect
          key={`gap-${a}`}
          x={pct(a, from, to)}
          y="8"
          width={pct(from + (b - a), from, to)}
          height="26"
          fill="url(#hatch)"
          className="tl-gap"
        >
          <title>
            {gapLabel} {formatTime(new Date(a).toISOString())} – {formatTime(new Date(b).toISOString())}
          </title>
        </rect>
      ))}
      {intervals.map((i) => {
        const start = clip(Date.parse(i.from));
        const end = clip(i.to ? Date.parse(i.to) : to);
        if (end <= start) return null;
        const x = pct(start, from, to);
        const width = pct(from + (end - start), from, to);
        return (
          <g key={i.from} className={`tl-band s-${i.status}`}>
            <rect x={x} y="8" width={width} height="26" className="tl-fill" />
            {i.stale ? <rect x={x} y="8" width={width} height="26" fill="url(#hatch)" /> : null}
            <title>
              {i.label ?? i.status}
              {i.stale ? ` (stale: ${i.staleReason?.toLowerCase() ?? ''})` : ''} {formatTime(i.from)} –{' '}
              {i.to ? formatTime(i.to) : 'now'} {i.message}
            </title>
          </g>
        );
      })}
      {markers.map((m) => {
        const t = Date.parse(m.at);
        if (t < from || t > to) return null;
        return (
          <g key={m.at} className="tl-marker">
            <line x1={pct(t, from, to)} x2={pct(t, from, to)} y1="2" y2="40" />
            <text x={pct(t, from, to)} y="7" textAnchor="middle" aria-hidden="true">
              ◆
            </text>
            <title>
              {m.label} at {formatTime(m.at)}
            </title>
          </g>
        );
      })}
      {selection ? (
        <rect
          className="tl-selection"
          x={pct(Math.min(...selection), from, to)}
          y="2"
          width={pct(from + Math.abs(selection[1] - selection[0]), from, to)}
          height="38"
        />
      ) : null}
      {at !== undefined && at >= from && at <= to ? (
        <line className="tl-at" x1={pct(at, from, to)} x2={pct(at, from, to)} y1="4" y2="40" />
      ) : null}
      {ticks(from, to).map((t) => (
        <g key={t} className="tl-tick">
          <line x1={pct(t, from, to)} x2={pct(t, from, to)} y1="34" y2="40" />
          <text x={pct(t, from, to)} y="54" textAnchor="middle">
            {tickLabel(t, to - from)}
          </text>
        </g>
      ))}
    </svg>
  );
}
