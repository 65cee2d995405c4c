/** Why an audit input was refused. */
export type AuditInputErrorKind = 'INVALID_DATE' | 'INVALID_RANGE' | 'INVERTED_INTERVAL' | 'OVERLAPPING_INTERVALS';

/**
 * The caller handed in a history the report cannot make sense of (overlapping intervals, an end
 * before its start, an invalid Date). Overlaps are refused rather than guessed at: they mean the
 * store is inconsistent, and a report that silently picked one side would hide it. Match on
 * `name` and `kind`, never on the message.
 */
export class AuditInputError extends Error {
  override readonly name = 'AuditInputError';
  readonly kind: AuditInputErrorKind;
  /** Where in the input: e.g. `phases[2].statusIntervals[5]`. */
  readonly path: string;

  constructor(kind: AuditInputErrorKind, path: string, message: string) {
    super(`${path}: ${message}`);
    this.kind = kind;
    this.path = path;
  }
}
