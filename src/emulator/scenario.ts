/**
 * Scripted changes over time: a scenario is a list of steps, each due `at` milliseconds after the
 * start, that change the emulator (apply objects, patch status, remove, inject or clear faults, or
 * run any function). Ready-made step builders live in `scenario-steps.ts`.
 */
import type { Emulator, EmulatorObjectRef, FaultRule, RemoveOptions } from './types.ts';

/** What a step does; exactly one of these per step. */
export type ScenarioAction =
  | { apply: object | object[] }
  | { patchStatus: { ref: EmulatorObjectRef; status: Record<string, unknown> } }
  | { remove: EmulatorObjectRef; options?: RemoveOptions }
  | { fault: FaultRule; /** Name to remove it by later with `{ removeFault: name }`. */ name?: string }
  | { removeFault: string }
  | { clearFaults: true }
  | { do: (em: Emulator) => void | Promise<void> };

/** One step: when (ms after start) and what. */
export type ScenarioStep = { at: number; label?: string } & ScenarioAction;

/** Options of {@link runScenario}. */
export interface ScenarioOptions {
  /** Stops the scenario; steps not yet run are skipped. */
  signal?: AbortSignal;
  /** Time scale: 2 runs twice as fast. @default 1 */
  speed?: number;
  /** Called after each step has run (tests wait on this instead of sleeping). */
  onStep?: (step: ScenarioStep, index: number) => void;
}

/** How a scenario ended. A step that throws ends it as `failed`; the error is data. */
export interface ScenarioResult {
  status: 'completed' | 'aborted' | 'failed';
  stepsRun: number;
  error?: { step: number; label?: string; message: string };
}

function waitUntil(deadline: number, signal: AbortSignal | undefined): Promise<boolean> {
  const delay = deadline - performance.now();
  if (signal?.aborted) return Promise.resolve(false);
  if (delay <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, delay);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function runAction(em: Emulator, step: ScenarioStep, faults: Map<string, () => void>): Promise<void> {
  if ('apply' in step) em.apply(step.apply);
  else if ('patchStatus' in step) em.patchStatus(step.patchStatus.ref, step.patchStatus.status);
  else if ('remove' in step) em.remove(step.remove, step.options);
  else if ('fault' in step) {
    const remover = em.injectFault(step.fault);
    if (step.name !== undefined) faults.set(step.name, remover);
  } else if ('removeFault' in step) {
    const remover = faults.get(step.removeFault);
    if (!remover) throw new Error(`no fault named "${step.removeFault}" was injected by this scenario`);
    remover();
    faults.delete(step.removeFault);
  } else if ('clearFaults' in step) em.clearFaults();
  else await step.do(em);
}

/** Runs steps in `at` order (ties keep their list order), each no earlier than its time. */
export async function runScenario(
  em: Emulator,
  steps: readonly ScenarioStep[],
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const speed = options.speed ?? 1;
  if (!(speed > 0))
    return { status: 'failed', stepsRun: 0, error: { step: -1, message: `speed must be > 0, got ${speed}` } };
  const bad = steps.findIndex((s) => !(Number.isFinite(s.at) && s.at >= 0));
  if (bad >= 0)
    return {
      status: 'failed',
      stepsRun: 0,
      error: {
        step: bad,
        message: `step ${bad} has an invalid "at" (${String(steps[bad]?.at)}); use milliseconds >= 0`,
      },
    };
  const ordered = steps.map((step, i) => ({ step, i })).sort((a, b) => a.step.at - b.step.at || a.i - b.i);
  const start = performance.now();
  const faults = new Map<string, () => void>();
  let stepsRun = 0;
  for (const { step, i } of ordered) {
    if (!(await waitUntil(start + step.at / speed, options.signal))) return { status: 'aborted', stepsRun };
    try {
      await runAction(em, step, faults);
    } catch (e) {
      return {
        status: 'failed',
        stepsRun,
        error: { step: i, ...(step.label !== undefined ? { label: step.label } : {}), message: (e as Error).message },
      };
    }
    stepsRun++;
    options.onStep?.(step, i);
  }
  return { status: 'completed', stepsRun };
}

/** Moves steps later by `offsetMs` (to chain builders). */
export function delaySteps(steps: readonly ScenarioStep[], offsetMs: number): ScenarioStep[] {
  return steps.map((s) => ({ ...s, at: s.at + offsetMs }));
}

export {
  clusterOutage,
  deploymentRollout,
  podCrashLoop,
  type ClusterOutageOptions,
  type DeploymentRolloutOptions,
  type PodCrashLoopOptions,
} from './scenario-steps.ts';
