/** The CLI command that shows what a view shows (CLI/UI parity), copyable. */
import { useState } from 'react';

export function CliHint({ command }: { command: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard?.writeText(command).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    });
  };
  return (
    <div className="cli">
      <span className="cli-label">CLI:</span> <code>{command}</code>{' '}
      <button type="button" onClick={copy} aria-label={`Copy the command ${command}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** A phase as the CLI names it. */
export function phaseArg(phase: { cluster: string; namespace: string; name: string }): string {
  return `${phase.cluster}/${phase.namespace}/${phase.name}`;
}
