/**
 * `node --import` form of {@link registerLeanClientNode}, for processes whose entry is not
 * bin/phaselog.mjs (the benchmarks' worker processes): registers the hook before the entry's
 * static imports load client-node.
 */
import { registerLeanClientNode } from './lean-client-node.ts';

registerLeanClientNode();
