import { LuaEngine, LuaFactory, LuaReturn, LuaType, LUA_REGISTRYINDEX } from 'wasmoon';
import type { LuaWasm } from 'wasmoon';
import type { LuaSandboxLimits } from './config.ts';
import { LUA_PRELUDE } from './lua-prelude.ts';

/** What one script run gave: the returned `status`/`message`, or why it could not run. */
export type LuaRunOutcome =
  | { ok: true; status: string; message: string }
  | { ok: false; error: string };

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

const LUA_MULTRET = -1;
const HOOK_MASK_COUNT = 8;
/** The hook runs every this many VM instructions: cheap, yet stops a loop within microseconds. */
const HOOK_STEP = 1000;
const MAX_DEPTH = 64;
const encoder = new TextEncoder();

/** The Emscripten module's raw exports used on the hot path (wasmoon's types do not list them). */
interface RawLuaExports {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
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
 * an instruction budget and a wall-clock deadline (an instruction hook) and a memory cap (a
 * counting allocator). A run that breaks the WebAssembly instance itself rebuilds the state and
 * recompiles, so the next run works normally.
 */
export class LuaRuntime {
  private engine!: LuaEngine;
  private L = 0;
  private makeEnvRef = 0;
  private abortRef = 0;
  private readonly hook: number;
  private readonly scripts: ScriptRecord[] = [];
  private budgetLeft = 0;
  private deadline = 0;
  private abortReason = '';
  private closed = false;
  private scratch = 0;
  private scratchSize = 0;
  private scratchView: Uint8Array | undefined;
  private readonly ancestors = new Set<object>();
  private readonly raw: RawLuaExports;

  private constructor(
    private readonly lua: LuaWasm,
    private readonly limits: LuaSandboxLimits,
  ) {
    this.raw = lua.module as unknown as RawLuaExports;
    this.hook = lua.module.addFunction((state: number) => this.onHook(state), 'vii');
    this.buildState();
  }

  /** Loads the WebAssembly Lua module (once per runtime) and prepares the sandbox. */
  static async create(limits: LuaSandboxLimits): Promise<LuaRuntime> {
    const lua = await new LuaFactory().getLuaModule();
    return new LuaRuntime(lua, limits);
  }

  private buildState(): void {
    this.engine = new LuaEngine(this.lua, { openStandardLibs: true, injectObjects: false, enableProxy: false, traceAllocations: true });
    this.L = this.engine.global.address;
    const { lua, L } = this;
    const status = this.loadChunk(LUA_PRELUDE, '=prelude');
    if (status !== LuaReturn.Ok || lua.lua_pcallk(L, 0, 2, 0, 0, null) !== LuaReturn.Ok) {
      throw new Error(`Lua prelude failed: ${lua.lua_tolstring(L, -1, null)}`);
    }
    this.abortRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    this.makeEnvRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    for (const script of this.scripts) {
      if (this.loadChunk(script.source, `@${script.name}`) !== LuaReturn.Ok) throw new Error(`recompiling ${script.name} failed`);
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
      return { ok: false, error: `could not run the Lua health check: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  private runProtected(script: ScriptRecord, object: Record<string, unknown>, useOpenLibs: boolean): LuaRunOutcome {
    const { lua, L } = this;
    const global = this.engine.global;
    lua.lua_settop(L, 0);
    global.setMemoryMax(undefined);
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

    global.setMemoryMax(global.getMemoryUsed() + this.limits.memoryLimitMiB * 1024 * 1024);
    this.budgetLeft = this.limits.instructionLimit;
    this.deadline = Date.now() + this.limits.timeoutMs;
    this.abortReason = '';
    lua.lua_sethook(L, this.hook, HOOK_MASK_COUNT, HOOK_STEP);
    let status: LuaReturn;
    try {
      status = lua.lua_pcallk(L, 0, LUA_MULTRET, 0, 0, null);
    } finally {
      lua.lua_sethook(L, null, 0, 0);
      global.setMemoryMax(undefined);
    }
    try {
      if (status !== LuaReturn.Ok) return { ok: false, error: this.describeError(status) };
      return this.readResult(lua.lua_gettop(L) >= 2 ? 2 : 0);
    } finally {
      lua.lua_settop(L, 0);
    }
  }

  private onHook(state: number): void {
    this.budgetLeft -= HOOK_STEP;
    if (this.budgetLeft < 0) {
      this.abortReason = `exceeded the instruction limit of ${this.limits.instructionLimit}`;
    } else if (Date.now() > this.deadline) {
      this.abortReason = `exceeded the time limit of ${this.limits.timeoutMs} ms`;
    } else {
      return;
    }
    this.lua.lua_rawgeti(state, LUA_REGISTRYINDEX, BigInt(this.abortRef));
    this.lua.lua_error(state);
  }

  private describeError(status: LuaReturn): string {
    if (this.abortReason !== '') return `Lua script ${this.abortReason}`;
    if (status === LuaReturn.ErrorMem) return `Lua script exceeded the memory limit of ${this.limits.memoryLimitMiB} MiB`;
    const { lua, L } = this;
    const type = lua.lua_type(L, -1);
    if (type === LuaType.String || type === LuaType.Number) return lua.lua_tolstring(L, -1, null);
    return `Lua script raised a ${lua.lua_typename(L, type)} value as error`;
  }

  /** Argo CD reads the returned table's `status` and `message` as JSON strings. */
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
    const type = lua.lua_getfield(L, index, field);
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
   * with strings encoded into one reused buffer, about twice as fast as the ccall wrappers for the
   * hundreds of fields of a real object.
   */
  private pushValue(value: unknown, depth: number): void {
    const raw = this.raw;
    const L = this.L;
    if (typeof value === 'string') this.pushString(value);
    else if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) raw._lua_pushinteger(L, BigInt(value));
      else raw._lua_pushnumber(L, value);
    } else if (typeof value === 'boolean') raw._lua_pushboolean(L, value ? 1 : 0);
    else if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || this.ancestors.has(value)) raw._lua_pushnil(L);
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
    if (this.scratch !== 0) this.raw._free(this.scratch);
    this.scratch = 0;
    this.scratchView = undefined;
  }
}
