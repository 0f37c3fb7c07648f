/**
 * undici, loaded on first use (core/lazy-require.ts). Its index loads all of it (fetch,
 * WebSocket, caches, mocks: 109 modules), the largest single cost of a daemon's start, for what
 * only talks to the supervisor (started with the first container) and to registries (the first
 * pull).
 */
import { lazyRequire } from "../../core/lazy-require.js";

export const undici = lazyRequire<typeof import("undici")>("undici");
