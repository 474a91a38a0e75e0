/**
 * Teardown shared by the tests that run worker PROCESSES: after each test, its workflows are terminated,
 * the processes killed, the client closed and whatever else it registered (emulators, proxies) closed; with
 * `scope: 'file'`, after the file's last test instead, for cases that share one fleet (servers and processes started
 * once). (Tests with in-process workers use `useStack` / `useStackPerTest` instead.)
 */
import { afterAll, afterEach } from 'vitest';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { startTestEmulator } from './emulator';
import { stopWorkerProcesses } from './worker-process';
import { testClient } from './temporal';

export interface FleetTest {
  /** A client closed after the test. */
  client(): Promise<Client>;
  /** Terminated after the test. */
  track<H extends WorkflowHandle>(handle: H): H;
  /** Closed after the test (after the workers stopped). */
  closeLater(close: () => Promise<unknown>): void;
  /** An in-process emulator (the test token unless `options` names one) for the worker processes, closed after the test. */
  emulator(options?: EmulatorOptions): Promise<Emulator>;
}

export function useFleetTeardown(options: { scope?: 'test' | 'file' } = {}): FleetTest {
  let handles: WorkflowHandle[] = [];
  let closers: (() => Promise<unknown>)[] = [];
  let client: Client | undefined;
  (options.scope === 'file' ? afterAll : afterEach)(async () => {
    await Promise.all(handles.map((h) => h.terminate('test over').catch(() => undefined)));
    await stopWorkerProcesses();
    await client?.connection.close();
    await Promise.all(closers.map((c) => c()));
    [handles, closers, client] = [[], [], undefined];
  });
  return {
    async client() {
      client ??= await testClient();
      return client;
    },
    track(handle) {
      handles.push(handle);
      return handle;
    },
    closeLater(close) {
      closers.push(close);
    },
    async emulator(options) {
      const emulator = await startTestEmulator(options);
      closers.push(() => emulator.close());
      return emulator;
    },
  };
}
