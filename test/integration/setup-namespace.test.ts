import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { setupNamespace } from '../../src/temporal/setup-namespace';
import { testClient } from '../helpers/temporal';

describe('namespace setup for a production cluster', () => {
  it('creates a missing namespace with every longhaul search attribute, and a second run changes nothing', async () => {
    const client = await testClient();
    const namespace = `longhaul-setup-${randomUUID().slice(0, 8)}`;
    try {
      const first = await setupNamespace(client.connection, namespace);
      expect(first.join('\n')).toMatch(`created namespace ${namespace}`);
      const listed = await client.connection.operatorService.listSearchAttributes({ namespace });
      for (const key of ALL_SEARCH_ATTRIBUTES) expect(Object.keys(listed.customAttributes ?? {})).toContain(key.name);
      expect(await setupNamespace(client.connection, namespace)).toEqual([]);
    } finally {
      await client.connection.close();
    }
  });
});
