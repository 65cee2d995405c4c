import { LuaEngine, LuaFactory, LuaReturn, LuaType, LUA_REGISTRYINDEX } from 'wasmoon';
import type { LuaWasm } from 'wasmoon';
import type { LuaSandboxLimits } from './config.ts';
import { LUA_CHECKED_CALLS, SEARCH_MODE } from './lua-checked-calls.ts';
import { LuaPatternMatcher } from './lua-pattern.ts';
import type { LuaCapture } from './lua-pattern.ts';
import { LUA_PRELUDE } from './lua-prelude.ts';

/** What one script run gave: the returned `status`/`message`, or why it could not run. */
export type LuaRunOutcome = { ok: true; status: string; message: string } | { ok: false; error: string };

/** A compiled script: an opaque handle into the runtime's registry. */
export interface LuaScriptHandle {
  readonly id: number;
  readonly name: string;
}

/** A script that did not compile, with the line Lua reported. */
export interface LuaCompileFailure {
  message: string;
  line?: number;
}

const HOOK_MASK_COUNT = 8;
/**
 * The hook runs every this many VM instructions. Some single instructions take time in proportion
 * to a string's length (`..`, `<`, `==`, arithmetic on a numeral string), so the interval also
 * bounds how far past the deadline a run can get.
 */
const HOOK_STEP = 100;
/**
 * No single allocation of a running script may exceed this: a string or table part larger than
 * the largest object Kubernetes stores (etcd's 1.5 MiB) has no use in a health check, and the cap
 * keeps every one of those length-proportional instructions short.
 */
const MAX_BLOCK_BYTES = 4 * 1024 * 1024;
const MAX_DEPTH = 64;
const encoder = new TextEncoder();

/** The Emscripten module's raw exports used on the hot path (wasmoon's types do not list them). */
interface RawLuaExports {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _realloc(pointer: number, size: number): number;
  _free(pointer: number): void;
  _lua_tolstring(L: number, index: number, lengthOut: number): number;
  _lua_tonumberx(L: number, index: number, isNumberOut: number): number;
  _lua_toboolean(L: number, index: number): number;
  _lua_pushlstring(L: number, pointer: number, length: number): number;
  _lua_pushinteger(L: number, value: bigint): void;
  _lua_pushnumber(L: number, value: number): void;
  _lua_pushboolean(L: number, value: number): void;
  _lua_pushnil(L: number): void;
  _lua_checkstack(L: number, n: number): number;
  _lua_createtable(L: number, narr: number, nrec: number): void;
  _lua_rawset(L: number, index: number): void;
  _lua_rawseti(L: number, index: number, n: bigint): void;
}

interface ScriptRecord {
  name: string;
  source: string;
  ref: number;
}

/**
 * Argo CD health scripts on Lua 5.4 (wasmoon), driven through Lua's C API so a run is synchronous.
 * One Lua state holds every compiled script; each run gets a fresh global table (see the prelude),
 * an instruction budget and a wall-clock deadline (an instruction hook, plus `charge` for work done
 * inside library C functions, see lua-checked-calls.ts, and `search`, the pattern matcher that
 * counts its own steps, see lua-pattern.ts) and a memory cap (our allocator, which
 * also caps single blocks). An abort is sticky: once the budget or deadline is passed, every later
 * hook, charge and allocation of that run fails again, and the run is reported as failed whatever
 * the script returns. The result is read with raw gets, so no metamethod of the script runs after
 * the limits are lifted. A run that breaks the WebAssembly instance itself rebuilds the state and
 * recompiles, so the next run works normally.
 */
export class LuaRuntime {
  private engine!: LuaEngine;
  private L = 0;
  private makeEnvRef = 0;
  private abortRef = 0;
  private readonly hook: number;
  private readonly charge: number;
  private readonly search: number;
  private readonly allocator: number;
  private readonly scripts: ScriptRecord[] = [];
  private memoryUsed = 0;
  private memoryMax = 0;
  private limiting = false;
  private refusedBlock = false;
  private budgetLeft = 0;
  private deadline = 0;
  private abortReason = '';
  private closed = false;
  private scratch = 0;
  private scratchSize = 0;
  private scratchView: Uint8Array | undefined;
  private readonly ancestors = new Set<object>();
  private readonly raw: RawLuaExports;
  private readonly matcher = new LuaPatternMatcher();
  private readonly isPastDeadline = (): boolean => Date.now() > this.deadline;
  /** A 4-byte cell in WebAssembly memory where `lua_tolstring` writes a string's length. */
  private readonly lengthCell: number;

  private constructor(
    private readonly lua: LuaWasm,
    private readonly limits: LuaSandboxLimits,
  ) {
    this.raw = lua.module as unknown as RawLuaExports;
    this.hook = lua.module.addFunction((state: number) => this.onHook(state), 'vii');
    this.charge = lua.module.addFunction((state: number) => this.onCharge(state), 'ii');
    this.search = lua.module.addFunction((state: number) => this.onSearch(state), 'ii');
    this.lengthCell = this.raw._malloc(4);
    this.allocator = lua.module.addFunction(
      (_ud: number, pointer: number, oldSize: number, newSize: number) => this.onAlloc(pointer, oldSize, newSize),
      'iiiii',
    );
    this.buildState();
  }

  /** Loads the WebAssembly Lua module (once per runtime) and prepares the sandbox. */
  static async create(limits: LuaSandboxLimits): Promise<LuaRuntime> {
    const lua = await new LuaFactory().getLuaModule();
    return new LuaRuntime(lua, limits);
  }

  private buildState(): void {
    this.engine = new LuaEngine(this.lua, {
      openStandardLibs: true,
      injectObjects: false,
      enableProxy: false,
      traceAllocations: true,
    });
    this.L = this.engine.global.address;
    const { lua, L } = this;
    // From here on our allocator counts every block (wasmoon's counted the ones made so far).
    this.memoryUsed = this.engine.global.getMemoryUsed();
    this.limiting = false;
    lua.lua_setallocf(L, this.allocator, null);
    lua.lua_settop(L, 0);
    let status = this.loadChunk(LUA_CHECKED_CALLS, '=checked-calls');
    if (status === LuaReturn.Ok) {
      lua.lua_pushcclosure(L, this.charge, 0);
      lua.lua_pushcclosure(L, this.search, 0);
      status = lua.lua_pcallk(L, 2, 1, 0, 0, null);
    }
    if (status === LuaReturn.Ok) status = this.loadChunk(LUA_PRELUDE, '=prelude');
    if (status === LuaReturn.Ok) {
      lua.lua_pushvalue(L, 1);
      lua.lua_pushcclosure(L, this.charge, 0);
      status = lua.lua_pcallk(L, 2, 2, 0, 0, null);
    }
    if (status !== LuaReturn.Ok) throw new Error(`Lua prelude failed: ${lua.lua_tolstring(L, -1, null)}`);
    this.abortRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    this.makeEnvRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    lua.lua_settop(L, 0);
    for (const script of this.scripts) {
      if (this.loadChunk(script.source, `@${script.name}`) !== LuaReturn.Ok)
        throw new Error(`recompiling ${script.name} failed`);
      script.ref = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    }
  }

  private loadChunk(source: string, chunkName: string): LuaReturn {
    return this.lua.luaL_loadbufferx(this.L, source, Buffer.byteLength(source), chunkName, 't');
  }

  /** Compiles a script once; a syntax error comes back with Lua's message and line. */
  compile(source: string, name: string): LuaScriptHandle | LuaCompileFailure {
    const { lua, L } = this;
    if (this.loadChunk(source, `@${name}`) !== LuaReturn.Ok) {
      const message = lua.lua_tolstring(L, -1, null) ?? 'syntax error';
      lua.lua_settop(L, 0);
      const line = /:(\d+):/.exec(message)?.[1];
      return line === undefined ? { message } : { message, line: Number(line) };
    }
    this.scripts.push({ name, source, ref: lua.luaL_ref(L, LUA_REGISTRYINDEX) });
    return { id: this.scripts.length - 1, name };
  }

  /** Runs a compiled script against an object, as Argo CD does: the object is the global `obj`. */
  run(handle: LuaScriptHandle, object: Record<string, unknown>, useOpenLibs: boolean): LuaRunOutcome {
    if (this.closed) return { ok: false, error: 'health checker is closed' };
    const script = this.scripts[handle.id];
    if (!script) return { ok: false, error: `unknown script ${handle.name}` };
    try {
      return this.runProtected(script, object, useOpenLibs);
    } catch (error) {
      // Lua errors are return codes; only a throwing input object or a fault of the WebAssembly
      // instance lands here. Either may leave the state half-written, so start from a fresh one.
      this.rebuildAfterFault();
      return {
        ok: false,
        error: `could not run the Lua health check: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  private runProtected(script: ScriptRecord, object: Record<string, unknown>, useOpenLibs: boolean): LuaRunOutcome {
    const { lua, L } = this;
    lua.lua_settop(L, 0);
    this.limiting = false;
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.makeEnvRef));
    this.ancestors.clear();
    this.pushValue(object, 0);
    lua.lua_pushboolean(L, useOpenLibs ? 1 : 0);
    if (lua.lua_pcallk(L, 2, 1, 0, 0, null) !== LuaReturn.Ok) {
      const message = lua.lua_tolstring(L, -1, null);
      lua.lua_settop(L, 0);
      return { ok: false, error: `preparing the Lua environment failed: ${message}` };
    }
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(script.ref));
    lua.lua_pushvalue(L, 1);
    lua.lua_setupvalue(L, 2, 1);

    this.memoryMax = this.memoryUsed + this.limits.memoryLimitMiB * 1024 * 1024;
    this.refusedBlock = false;
    this.budgetLeft = this.limits.instructionLimit;
    this.deadline = Date.now() + this.limits.timeoutMs;
    this.abortReason = '';
    this.limiting = true;
    lua.lua_sethook(L, this.hook, HOOK_MASK_COUNT, HOOK_STEP);
    let status: LuaReturn;
    try {
      // Only the first returned value is read; asking for one keeps extra values off the stack.
      status = lua.lua_pcallk(L, 0, 1, 0, 0, null);
    } finally {
      lua.lua_sethook(L, null, 0, 0);
      this.limiting = false;
    }
    try {
      // A script may swallow the abort's error and return normally; the abort still decides.
      if (this.abortReason !== '') return { ok: false, error: `Lua script ${this.abortReason}` };
      if (status !== LuaReturn.Ok) return { ok: false, error: this.describeError(status) };
      return this.readResult(lua.lua_gettop(L) >= 2 ? 2 : 0);
    } finally {
      lua.lua_settop(L, 0);
    }
  }

  private onHook(state: number): void {
    this.budgetLeft -= HOOK_STEP;
    if (this.isOverLimit()) this.raiseAbort(state);
  }

  /** `charge(cost)`: work a library C function is about to do, in instructions; `charge(0)` only checks. */
  private onCharge(state: number): number {
    const cost = this.lua.lua_tonumberx(state, 1, null);
    if (cost > 0) this.budgetLeft -= cost;
    if (this.isOverLimit()) this.raiseAbort(state);
    return 0;
  }

  /**
   * `search(s, p, init, last_match, mode, anchor_allowed, what)`: the pattern calls' matcher (see
   * lua-checked-calls.ts). Runs lua-pattern's matcher from 0-based `init` with what is left of the
   * budget, charges the steps it took, and pushes nil or what `mode` asks for. A pattern error
   * gives `false, message` (Lua's wording), for the caller to raise at its caller's line as Lua's
   * C functions do; running out of budget or time aborts the run.
   */
  private onSearch(state: number): number {
    // Sticky abort (a __close handler may run after it); the matcher itself checks budget and time.
    if (this.abortReason !== '') this.raiseAbort(state);
    const { lua, raw } = this;
    const subject = this.readString(state, 1);
    const pattern = this.readString(state, 2);
    // Raw exports: this runs once per match of a gmatch/gsub loop, and the wrappers convert on every call.
    const mode = raw._lua_tonumberx(state, 5, 0);
    const outcome = this.matcher.search(
      raw.HEAPU8.subarray(subject.pointer, subject.pointer + subject.length),
      raw.HEAPU8.subarray(pattern.pointer, pattern.pointer + pattern.length),
      {
        init: raw._lua_tonumberx(state, 3, 0),
        lastMatch: raw._lua_tonumberx(state, 4, 0),
        anchorAllowed: raw._lua_toboolean(state, 6) !== 0,
        maxSteps: Math.max(0, this.budgetLeft),
        isOutOfTime: this.isPastDeadline,
      },
    );
    this.budgetLeft -= outcome.steps;
    if (outcome.kind === 'out-of-steps' || outcome.kind === 'out-of-time') {
      const limit =
        outcome.kind === 'out-of-steps'
          ? `the instruction limit of ${this.limits.instructionLimit}`
          : `the time limit of ${this.limits.timeoutMs} ms`;
      const what = lua.lua_tolstring(state, 7, null);
      this.abortReason = `exceeded ${limit} in ${what} (pattern matching on a ${subject.length}-byte subject)`;
      this.raiseAbort(state);
      return 0;
    }
    const rawMode = mode === SEARCH_MODE.raw;
    if (
      outcome.kind === 'error' ||
      (outcome.kind === 'found' && !rawMode && outcome.captures.some((c) => c.kind === 'unfinished'))
    ) {
      raw._lua_pushboolean(state, 0);
      lua.lua_pushstring(state, outcome.kind === 'error' ? outcome.message : 'unfinished capture');
      return 2;
    }
    // Two positions and up to 32 captures; a C function is only promised 20 slots.
    raw._lua_checkstack(state, 40);
    if (outcome.kind === 'none') {
      raw._lua_pushnil(state);
      return 1;
    }
    const { start, end, captures } = outcome;
    let pushed = 0;
    if (mode !== SEARCH_MODE.match) {
      raw._lua_pushinteger(state, BigInt(start + 1));
      raw._lua_pushinteger(state, BigInt(end));
      pushed = 2;
    }
    if (captures.length === 0 && (mode === SEARCH_MODE.match || mode === SEARCH_MODE.iterate)) {
      raw._lua_pushlstring(state, subject.pointer + start, end - start);
      return pushed + 1;
    }
    for (const capture of captures) this.pushCapture(state, subject.pointer, capture);
    return pushed + captures.length;
  }

  private readString(state: number, index: number): { pointer: number; length: number } {
    const pointer = this.raw._lua_tolstring(state, index, this.lengthCell);
    const heap = this.raw.HEAPU8;
    const cell = this.lengthCell;
    const length = (heap[cell]! | (heap[cell + 1]! << 8) | (heap[cell + 2]! << 16) | (heap[cell + 3]! << 24)) >>> 0;
    return { pointer, length };
  }

  /** Lua's `push_onecapture`; an unfinished capture (only pushed in raw mode) is `false`. */
  private pushCapture(state: number, subject: number, capture: LuaCapture): void {
    const raw = this.raw;
    if (capture.kind === 'text') raw._lua_pushlstring(state, subject + capture.start, capture.end - capture.start);
    else if (capture.kind === 'position') raw._lua_pushinteger(state, BigInt(capture.position));
    else raw._lua_pushboolean(state, 0);
  }

  /** Sticky: once a limit was passed, every later check of the run fails too. */
  private isOverLimit(): boolean {
    if (this.abortReason !== '') return true;
    if (this.budgetLeft < 0) {
      this.abortReason = `exceeded the instruction limit of ${this.limits.instructionLimit}`;
    } else if (Date.now() > this.deadline) {
      this.abortReason = `exceeded the time limit of ${this.limits.timeoutMs} ms`;
    }
    return this.abortReason !== '';
  }

  private raiseAbort(state: number): void {
    this.lua.lua_rawgeti(state, LUA_REGISTRYINDEX, BigInt(this.abortRef));
    this.lua.lua_error(state);
  }

  /**
   * Lua's allocator (`lua_Alloc`). While a script runs, growth is refused past the memory cap,
   * for a single block over MAX_BLOCK_BYTES, and after an abort; Lua turns a refusal into a
   * memory error. When `pointer` is 0, `oldSize` is a type tag, not a size.
   */
  private onAlloc(pointer: number, oldSize: number, newSize: number): number {
    const raw = this.raw;
    if (newSize === 0) {
      if (pointer !== 0) {
        this.memoryUsed -= oldSize;
        raw._free(pointer);
      }
      return 0;
    }
    const growth = pointer === 0 ? newSize : newSize - oldSize;
    if (this.limiting && growth > 0) {
      const tooBig = newSize > MAX_BLOCK_BYTES;
      if (tooBig || this.abortReason !== '' || this.memoryUsed + growth > this.memoryMax) {
        this.refusedBlock = tooBig;
        return 0;
      }
    }
    const moved = raw._realloc(pointer, newSize);
    if (moved !== 0) this.memoryUsed += growth;
    return moved;
  }

  private describeError(status: LuaReturn): string {
    if (status === LuaReturn.ErrorMem && this.refusedBlock) {
      return `Lua script exceeded the limit of ${MAX_BLOCK_BYTES / 1024 / 1024} MiB for a single string or table`;
    }
    if (status === LuaReturn.ErrorMem)
      return `Lua script exceeded the memory limit of ${this.limits.memoryLimitMiB} MiB`;
    const { lua, L } = this;
    const type = lua.lua_type(L, -1);
    if (type === LuaType.String || type === LuaType.Number) return lua.lua_tolstring(L, -1, null);
    return `Lua script raised a ${lua.lua_typename(L, type)} value as error`;
  }

  /**
   * Argo CD reads the returned table's `status` and `message` as JSON strings, encoding the table
   * without its metatable; raw gets do the same and run none of the script's metamethods.
   */
  private readResult(index: number): LuaRunOutcome {
    const { lua, L } = this;
    const type = index === 0 ? LuaType.Nil : lua.lua_type(L, index);
    if (type !== LuaType.Table) {
      return { ok: false, error: `expect table output from Lua script, not ${lua.lua_typename(L, type)}` };
    }
    const status = this.readStringField(index, 'status');
    if (typeof status !== 'string') return { ok: false, error: status.error };
    const message = this.readStringField(index, 'message');
    if (typeof message !== 'string') return { ok: false, error: message.error };
    return { ok: true, status, message };
  }

  private readStringField(index: number, field: string): string | { error: string } {
    const { lua, L } = this;
    lua.lua_pushstring(L, field);
    const type = lua.lua_rawget(L, index) as LuaType;
    try {
      if (type === LuaType.Nil) return '';
      if (type === LuaType.String) return lua.lua_tolstring(L, -1, null);
      return { error: `health ${field} must be a string, not ${lua.lua_typename(L, type)}` };
    } finally {
      lua.lua_settop(L, -2);
    }
  }

  /**
   * Pushes a JSON value the way Argo CD decodes objects for gopher-lua: JSON null is nil (so it
   * vanishes from maps and, as gopher-lua's Append skips nils, from arrays), integers stay Lua
   * integers so messages print "3/3", other numbers are floats. Calls the raw WebAssembly exports
   * with strings encoded into one reused buffer: the ccall wrappers convert and allocate on every
   * call, and a real object pushes hundreds of fields.
   */
  private pushValue(value: unknown, depth: number): void {
    const raw = this.raw;
    const L = this.L;
    if (typeof value === 'string') this.pushString(value);
    else if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) raw._lua_pushinteger(L, BigInt(value));
      else raw._lua_pushnumber(L, value);
    } else if (typeof value === 'boolean') raw._lua_pushboolean(L, value ? 1 : 0);
    else if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || this.ancestors.has(value))
      raw._lua_pushnil(L);
    else {
      // A cycle (impossible in JSON, possible in hand-built input) becomes nil instead of recursing forever.
      this.ancestors.add(value);
      raw._lua_checkstack(L, 4);
      if (Array.isArray(value)) {
        raw._lua_createtable(L, value.length, 0);
        let index = 0;
        for (const item of value) {
          if (item === null || item === undefined) continue;
          this.pushValue(item, depth + 1);
          raw._lua_rawseti(L, -2, BigInt(++index));
        }
      } else {
        const keys = Object.keys(value);
        raw._lua_createtable(L, 0, keys.length);
        for (const key of keys) {
          const item = (value as Record<string, unknown>)[key];
          if (item === null || item === undefined) continue;
          this.pushString(key);
          this.pushValue(item, depth + 1);
          raw._lua_rawset(L, -3);
        }
      }
      this.ancestors.delete(value);
    }
  }

  private pushString(text: string): void {
    const needed = text.length * 3 + 1;
    if (needed > this.scratchSize) {
      if (this.scratch !== 0) this.raw._free(this.scratch);
      this.scratchSize = Math.max(needed, this.scratchSize * 2, 4096);
      this.scratch = this.raw._malloc(this.scratchSize);
      this.scratchView = undefined;
    }
    // The view goes stale when the WebAssembly memory grows (HEAPU8 is then a new array).
    if (this.scratchView === undefined || this.scratchView.buffer !== this.raw.HEAPU8.buffer) {
      this.scratchView = this.raw.HEAPU8.subarray(this.scratch, this.scratch + this.scratchSize);
    }
    const { written } = encoder.encodeInto(text, this.scratchView);
    this.raw._lua_pushlstring(this.L, this.scratch, written);
  }

  private rebuildAfterFault(): void {
    try {
      this.engine.global.close();
    } catch {
      // The faulted state may not close cleanly; a fresh one replaces it either way.
    }
    this.buildState();
  }

  /** Frees the Lua state and the hook. Runs after close report an error instead of running. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.engine.global.close();
    this.lua.module.removeFunction(this.hook);
    this.lua.module.removeFunction(this.charge);
    this.lua.module.removeFunction(this.search);
    this.raw._free(this.lengthCell);
    this.lua.module.removeFunction(this.allocator);
    if (this.scratch !== 0) this.raw._free(this.scratch);
    this.scratch = 0;
    this.scratchView = undefined;
  }
}
