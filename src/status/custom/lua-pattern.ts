/**
 * Lua 5.4's pattern matcher (lstrlib.c: `match`, `max_expand`, `min_expand`, `%b`, `%f`,
 * captures and back-references), ported so that every step it takes is counted against a budget.
 *
 * The sandbox cannot interrupt Lua's own matcher: it is C, and the instruction hook never fires
 * inside a C call. Refusing a pattern by its worst case refuses ordinary ones (six `%d+` captures
 * over a 20-byte timestamp have a worst case above a million steps and take 33). Counting the steps
 * as they are taken charges a call what it really costs and stops a catastrophic one the moment the
 * budget runs out, whatever its shape.
 *
 * A step is one entry of `match` (or one turn of its tail-call loop), one byte tried by a
 * repetition, one byte scanned by `%b`, and one per 32 bytes compared by a back-reference; a
 * bracket class costs one more per 32 bytes of its text each time it is read. Semantics and error
 * messages are Lua 5.4's, including its laziness: a malformed tail of a pattern is only reported if
 * matching reaches it.
 */

/** One capture of a successful match. */
export type LuaCapture =
  { kind: 'text'; start: number; end: number } | { kind: 'position'; position: number } | { kind: 'unfinished' };

/** What one search gave. Offsets are 0-based into the subject; `end` is exclusive. */
export type PatternOutcome = { steps: number } & (
  | { kind: 'found'; start: number; end: number; captures: LuaCapture[] }
  | { kind: 'none' }
  | { kind: 'error'; message: string }
  | { kind: 'out-of-steps' }
  | { kind: 'out-of-time' }
);

/** Options of one search. */
export interface PatternSearchOptions {
  /** First start position tried, 0-based; past the end of the subject nothing is tried. */
  init: number;
  /** Whether a leading `^` anchors the pattern (find, match, gsub) or is a literal (gmatch). */
  anchorAllowed: boolean;
  /** End of the previous match of a gmatch/gsub loop: an empty match ending there is skipped. @default -1 */
  lastMatch?: number;
  /** Steps this search may take before it gives up with `out-of-steps`. */
  maxSteps: number;
  /** Asked every few thousand steps; `true` ends the search with `out-of-time`. */
  isOutOfTime?: () => boolean;
}

const ESC = 0x25; // %
const MAX_CALLS = 200; // lstrlib's MAXCCALLS: deeper recursion is "pattern too complex"
const MAX_CAPTURES = 32; // LUA_MAXCAPTURES
const CAP_UNFINISHED = -1;
const CAP_POSITION = -2;
/** Steps between two looks at the clock. */
const TIME_CHECK_STEPS = 16_384;

const ALPHA = 1;
const CNTRL = 2;
const DIGIT = 4;
const GRAPH = 8;
const LOWER = 16;
const PUNCT = 32;
const SPACE = 64;
const UPPER = 128;
const XDIGIT = 256;

/** The C locale's <ctype.h> classes of every byte: bytes above 127 belong to none. */
const CTYPE = (() => {
  const table = new Uint16Array(256);
  for (let c = 0; c < 128; c++) {
    const upper = c >= 65 && c <= 90;
    const lower = c >= 97 && c <= 122;
    const digit = c >= 48 && c <= 57;
    const graph = c >= 33 && c <= 126;
    let bits = 0;
    if (upper || lower) bits |= ALPHA;
    if (c < 32 || c === 127) bits |= CNTRL;
    if (digit) bits |= DIGIT;
    if (graph) bits |= GRAPH;
    if (lower) bits |= LOWER;
    if (graph && !upper && !lower && !digit) bits |= PUNCT;
    if ((c >= 9 && c <= 13) || c === 32) bits |= SPACE;
    if (upper) bits |= UPPER;
    if (digit || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)) bits |= XDIGIT;
    table[c] = bits;
  }
  return table;
})();

/** The classes `%a`, `%c`, ... name, by the letter's byte in either case; 0 for any other byte. */
const CLASS_BITS = (() => {
  const table = new Uint16Array(256);
  const letters: [string, number][] = [
    ['a', ALPHA],
    ['c', CNTRL],
    ['d', DIGIT],
    ['g', GRAPH],
    ['l', LOWER],
    ['p', PUNCT],
    ['s', SPACE],
    ['u', UPPER],
    ['w', ALPHA | DIGIT],
    ['x', XDIGIT],
  ];
  for (const [letter, bits] of letters) {
    table[letter.charCodeAt(0)] = bits;
    table[letter.toUpperCase().charCodeAt(0)] = bits;
  }
  return table;
})();

/** lstrlib's `match_class`: `%a`, `%D`, ... or, for any other byte, the byte itself. */
function matchClass(c: number, cl: number): boolean {
  const bits = CLASS_BITS[cl]!;
  if (bits === 0) return cl === c;
  const found = (CTYPE[c]! & bits) !== 0;
  return CTYPE[cl]! & UPPER ? !found : found;
}

/** Raised inside the matcher to unwind to `search`; never leaves this module. */
class Stop {
  constructor(
    readonly kind: 'error' | 'out-of-steps' | 'out-of-time',
    readonly message = '',
  ) {}
}

/**
 * A reusable matcher: `search` is lstrlib's `str_find_aux`/`gmatch_aux`/`str_gsub` loop over start
 * positions, returning the first match (and its captures) found from `init` on.
 */
export class LuaPatternMatcher {
  private s: Uint8Array = new Uint8Array(0);
  private p: Uint8Array = new Uint8Array(0);
  private sEnd = 0;
  private pEnd = 0;
  private level = 0;
  private depth = MAX_CALLS;
  private steps = 0;
  private maxSteps = 0;
  private untilTimeCheck = TIME_CHECK_STEPS;
  private isOutOfTime: (() => boolean) | undefined;
  private readonly capStart = new Int32Array(MAX_CAPTURES);
  private readonly capLen = new Int32Array(MAX_CAPTURES);

  search(subject: Uint8Array, pattern: Uint8Array, options: PatternSearchOptions): PatternOutcome {
    this.s = subject;
    this.p = pattern;
    this.sEnd = subject.length;
    this.pEnd = pattern.length;
    this.steps = 0;
    this.maxSteps = options.maxSteps;
    this.untilTimeCheck = TIME_CHECK_STEPS;
    this.isOutOfTime = options.isOutOfTime;
    const lastMatch = options.lastMatch ?? -1;
    const anchored = options.anchorAllowed && pattern[0] === 0x5e; // ^
    const p0 = anchored ? 1 : 0;
    const literal = this.literalFirstByte(p0);
    try {
      for (let s1 = options.init; s1 <= this.sEnd; s1++) {
        if (literal !== -1 && (s1 === this.sEnd || subject[s1] !== literal)) {
          // What match() would spend to fail here, without the call.
          this.spend(1);
          if (anchored) break;
          continue;
        }
        this.level = 0;
        this.depth = MAX_CALLS;
        const e = this.match(s1, p0);
        if (e !== -1 && e !== lastMatch) {
          return { kind: 'found', start: s1, end: e, captures: this.captures(), steps: this.steps };
        }
        if (anchored) break;
      }
      return { kind: 'none', steps: this.steps };
    } catch (stop) {
      if (!(stop instanceof Stop)) throw stop;
      if (stop.kind === 'error') return { kind: 'error', message: stop.message, steps: this.steps };
      return { kind: stop.kind, steps: this.steps };
    } finally {
      // Do not keep the caller's (WebAssembly-backed) views alive between calls.
      this.s = this.p = new Uint8Array(0);
      this.isOutOfTime = undefined;
    }
  }

  /**
   * The byte a match must start with when the pattern begins with a plain character that is not
   * optional (no `*`, `?`, `-` after it), else -1: positions holding another byte fail in one step.
   */
  private literalFirstByte(p: number): number {
    if (p >= this.pEnd) return -1;
    const c = this.p[p]!;
    // ( ) % [ . and a final $ are not plain characters in match().
    if (c === 0x28 || c === 0x29 || c === ESC || c === 0x5b || c === 0x2e) return -1;
    if (c === 0x24 && p + 1 === this.pEnd) return -1;
    const suffix = this.pat(p + 1);
    if (suffix === 0x2a || suffix === 0x3f || suffix === 0x2d) return -1;
    return c;
  }

  private captures(): LuaCapture[] {
    const out: LuaCapture[] = [];
    for (let i = 0; i < this.level; i++) {
      const len = this.capLen[i]!;
      const start = this.capStart[i]!;
      if (len === CAP_POSITION) out.push({ kind: 'position', position: start + 1 });
      else if (len === CAP_UNFINISHED) out.push({ kind: 'unfinished' });
      else out.push({ kind: 'text', start, end: start + len });
    }
    return out;
  }

  private spend(cost: number): void {
    this.steps += cost;
    if (this.steps > this.maxSteps) throw new Stop('out-of-steps');
    if ((this.untilTimeCheck -= cost) <= 0) {
      this.untilTimeCheck = TIME_CHECK_STEPS;
      if (this.isOutOfTime?.()) throw new Stop('out-of-time');
    }
  }

  private pat(i: number): number {
    return i < this.pEnd ? this.p[i]! : 0;
  }

  private match(s: number, p: number): number {
    if (this.depth-- === 0) throw new Stop('error', 'pattern too complex');
    for (;;) {
      this.spend(1);
      if (p === this.pEnd) break;
      const c = this.p[p]!;
      if (c === 0x28) {
        // (
        if (this.pat(p + 1) === 0x29) s = this.startCapture(s, p + 2, CAP_POSITION);
        else s = this.startCapture(s, p + 1, CAP_UNFINISHED);
        break;
      }
      if (c === 0x29) {
        // )
        s = this.endCapture(s, p + 1);
        break;
      }
      if (c === 0x24 && p + 1 === this.pEnd) {
        // $ as the last character
        if (s !== this.sEnd) s = -1;
        break;
      }
      if (c === ESC) {
        const next = this.pat(p + 1);
        if (next === 0x62) {
          // %b
          s = this.matchBalance(s, p + 2);
          if (s === -1) break;
          p += 4;
          continue;
        }
        if (next === 0x66) {
          // %f
          p += 2;
          if (this.pat(p) !== 0x5b) throw new Stop('error', "missing '[' after '%f' in pattern");
          const ep = this.classEnd(p);
          const previous = s === 0 ? 0 : this.s[s - 1]!;
          const current = s < this.sEnd ? this.s[s]! : 0;
          if (!this.matchBracketClass(previous, p, ep - 1) && this.matchBracketClass(current, p, ep - 1)) {
            p = ep;
            continue;
          }
          s = -1;
          break;
        }
        if (next >= 0x30 && next <= 0x39) {
          // %0-%9 back-reference
          s = this.matchCapture(s, next);
          if (s === -1) break;
          p += 2;
          continue;
        }
      }
      const ep = this.classEnd(p);
      const suffix = this.pat(ep);
      if (!this.singleMatch(s, p, ep)) {
        if (suffix === 0x2a || suffix === 0x3f || suffix === 0x2d) {
          // * ? - accept an empty match
          p = ep + 1;
          continue;
        }
        s = -1;
        break;
      }
      if (suffix === 0x3f) {
        // ?
        const res = this.match(s + 1, ep + 1);
        if (res !== -1) {
          s = res;
          break;
        }
        p = ep + 1;
        continue;
      }
      if (suffix === 0x2b) {
        // +
        s = this.maxExpand(s + 1, p, ep);
        break;
      }
      if (suffix === 0x2a) {
        // *
        s = this.maxExpand(s, p, ep);
        break;
      }
      if (suffix === 0x2d) {
        // -
        s = this.minExpand(s, p, ep);
        break;
      }
      s++;
      p = ep;
    }
    this.depth++;
    return s;
  }

  private classEnd(p: number): number {
    const c = this.p[p++]!;
    if (c === ESC) {
      if (p === this.pEnd) throw new Stop('error', "malformed pattern (ends with '%')");
      return p + 1;
    }
    if (c === 0x5b) {
      // [
      const open = p;
      if (this.pat(p) === 0x5e) p++;
      do {
        if (p === this.pEnd) throw new Stop('error', "malformed pattern (missing ']')");
        if (this.p[p++] === ESC && p < this.pEnd) p++;
      } while (this.pat(p) !== 0x5d);
      if (p - open > 32) this.spend((p - open) >> 5);
      return p + 1;
    }
    return p;
  }

  private singleMatch(s: number, p: number, ep: number): boolean {
    if (s >= this.sEnd) return false;
    const c = this.s[s]!;
    const pc = this.p[p]!;
    if (pc === 0x2e) return true; // .
    if (pc === ESC) return matchClass(c, this.p[p + 1]!);
    if (pc === 0x5b) {
      if (ep - p > 32) this.spend((ep - p) >> 5);
      return this.matchBracketClass(c, p, ep - 1);
    }
    return pc === c;
  }

  /** `p` is the `[`, `ec` the closing `]`. */
  private matchBracketClass(c: number, p: number, ec: number): boolean {
    let sig = true;
    if (this.pat(p + 1) === 0x5e) {
      sig = false;
      p++;
    }
    while (++p < ec) {
      const pc = this.p[p]!;
      if (pc === ESC) {
        p++;
        if (matchClass(c, this.pat(p))) return sig;
      } else if (this.pat(p + 1) === 0x2d && p + 2 < ec) {
        p += 2;
        if (pc <= c && c <= this.p[p]!) return sig;
      } else if (pc === c) return sig;
    }
    return !sig;
  }

  private maxExpand(s: number, p: number, ep: number): number {
    let i = 0;
    while (this.singleMatch(s + i, p, ep)) {
      this.spend(1);
      i++;
    }
    while (i >= 0) {
      const res = this.match(s + i, ep + 1);
      if (res !== -1) return res;
      i--;
    }
    return -1;
  }

  private minExpand(s: number, p: number, ep: number): number {
    for (;;) {
      const res = this.match(s, ep + 1);
      if (res !== -1) return res;
      if (!this.singleMatch(s, p, ep)) return -1;
      s++;
    }
  }

  private matchBalance(s: number, p: number): number {
    if (p >= this.pEnd - 1) throw new Stop('error', "malformed pattern (missing arguments to '%b')");
    const open = this.p[p]!;
    const close = this.p[p + 1]!;
    if (s >= this.sEnd || this.s[s] !== open) return -1;
    let depth = 1;
    while (++s < this.sEnd) {
      this.spend(1);
      const c = this.s[s]!;
      if (c === close) {
        if (--depth === 0) return s + 1;
      } else if (c === open) depth++;
    }
    return -1;
  }

  private startCapture(s: number, p: number, what: number): number {
    if (this.level >= MAX_CAPTURES) throw new Stop('error', 'too many captures');
    this.capStart[this.level] = s;
    this.capLen[this.level] = what;
    this.level++;
    const res = this.match(s, p);
    if (res === -1) this.level--;
    return res;
  }

  private endCapture(s: number, p: number): number {
    let l = this.level - 1;
    while (l >= 0 && this.capLen[l] !== CAP_UNFINISHED) l--;
    if (l < 0) throw new Stop('error', 'invalid pattern capture');
    this.capLen[l] = s - this.capStart[l]!;
    const res = this.match(s, p);
    if (res === -1) this.capLen[l] = CAP_UNFINISHED;
    return res;
  }

  private matchCapture(s: number, digit: number): number {
    const l = digit - 0x31;
    if (l < 0 || l >= this.level || this.capLen[l] === CAP_UNFINISHED) {
      throw new Stop('error', `invalid capture index %${l + 1}`);
    }
    const len = this.capLen[l]!;
    // A position capture has no text: Lua's size_t comparison makes it fail.
    if (len < 0 || this.sEnd - s < len) return -1;
    this.spend(len >> 5);
    const from = this.capStart[l]!;
    for (let k = 0; k < len; k++) if (this.s[from + k] !== this.s[s + k]) return -1;
    return s + len;
  }
}
