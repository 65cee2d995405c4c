/** The gate a CI pipeline asks: has the phase held a status for a duration? Same query as `phaselog gate`. */
import { useState, type FormEvent } from 'react';
import { ApiError, gql } from './api.ts';
import { CliHint, phaseArg } from './cli-hint.tsx';
import { formatTime, StatusBadge, STATUSES } from './status.tsx';

interface GateAnswer {
  passed: boolean;
  reason: string;
  message: string;
  status: string | null;
  heldSince: string | null;
  remaining: string | null;
  blockingResources: { key: string; status: string; message: string }[];
}

const GATE = `query Gate($phase: PhaseRef!, $status: Status, $for: Duration!) {
  gate(phase: $phase, status: $status, for: $for) { passed reason message status heldSince remaining blockingResources { key status message } }
}`;

export function GateWidget({ phase }: { phase: { cluster: string; namespace: string; name: string } }) {
  const [status, setStatus] = useState('Current');
  const [duration, setDuration] = useState('10m');
  const [answer, setAnswer] = useState<GateAnswer | undefined>();
  const [error, setError] = useState<string | undefined>();
  const ask = (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    gql<{ gate: GateAnswer }>(GATE, {
      phase: { cluster: phase.cluster, namespace: phase.namespace, name: phase.name },
      status,
      for: duration,
    }).then(
      (data) => setAnswer(data.gate),
      (e: unknown) => {
        setAnswer(undefined);
        setError(e instanceof ApiError ? e.message : String(e));
      },
    );
  };
  return (
    <section aria-labelledby="gate-title">
      <h2 id="gate-title">Gate</h2>
      <form className="filters" onSubmit={ask}>
        <label>
          Must hold{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          for <input value={duration} onChange={(e) => setDuration(e.target.value)} size={6} />
        </label>
        <button type="submit">Check gate</button>
      </form>
      {error ? (
        <p role="alert" className="error">
          {error}
        </p>
      ) : null}
      {answer ? (
        <div className={`gate ${answer.passed ? 'gate-pass' : 'gate-fail'}`} role="status">
          <strong>{answer.passed ? '✓ passed' : '✕ not passed'}</strong> <code>{answer.reason}</code> — {answer.message}
          <div>
            now <StatusBadge status={answer.status} />; held since {formatTime(answer.heldSince)}; remaining{' '}
            {answer.remaining ?? '–'}
          </div>
          {answer.blockingResources.length ? (
            <ul>
              {answer.blockingResources.map((r) => (
                <li key={r.key}>
                  {r.key}: {r.status} {r.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      <CliHint command={`phaselog gate ${phaseArg(phase)} --status ${status} --for ${duration}`} />
    </section>
  );
}
