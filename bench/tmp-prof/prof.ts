import { readFileSync } from 'node:fs';
import { createDb } from '../../src/store/prisma.ts';
import { createFleetStateReader } from '../../src/store/read-fleet-state.ts';
import { renderFleetState, registerFleetMetrics } from '../../src/metrics/fleet-metrics.ts';
import { createMetrics } from '../../src/metrics/registry.ts';
const db = createDb(readFileSync('/tmp/metrics-db.txt', 'utf8').trim());
const read = createFleetStateReader(db);
const m = createMetrics(); registerFleetMetrics(m, read);
for (let i = 0; i < 8; i++) {
  let t = performance.now(); const state = await read(); const q = performance.now() - t;
  t = performance.now(); const text = renderFleetState(state, new Date()); const f = performance.now() - t;
  t = performance.now(); const body = (await m.render()).body; const r = performance.now() - t;
  console.log({ q: Math.round(q), f: Math.round(f), r: Math.round(r), bytes: body.length, textBytes: text.length });
}
await db.$disconnect();
