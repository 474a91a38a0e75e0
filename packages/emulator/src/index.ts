/**
 * The platform emulator's public entry: what longhaul's stack (`longhaul start`, `longhaul demo`) starts in its
 * own process, and what tests start. Tests and benchmarks reach further in (fixtures, fault plans, the Google
 * families) by path.
 */
export { Emulator, startEmulator, type EmulatorOptions } from './emulator';
export { STANDALONE_GOOGLE_PORTS } from './google';
