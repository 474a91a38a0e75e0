/**
 * The import-boundary lint (`npm run lint:layers`, dependency-cruiser with .dependency-cruiser.cjs) fails on what
 * it is there to refuse: an import up the layers (the HTTP core importing a process) and two folders importing each
 * other; it passes an import down the layers. Run on the small tree in test/fixtures/layers/, with the real rules.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface Config {
  forbidden: unknown[];
  options: Record<string, unknown>;
}

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function violations(start: string): Promise<Violation[]> {
  // dependency-cruiser is an ES module; a computed specifier keeps TypeScript's CommonJS resolution out of it.
  const specifier: string = 'dependency-cruiser';
  const { cruise } = (await import(specifier)) as { cruise: (files: string[], options: object) => Promise<{ output: string }> };
  const config = ((await import(join(__dirname, '../../.dependency-cruiser.cjs'))) as { default: Config }).default;
  // The fixture has no tsconfig of its own; its imports are plain relative paths.
  const { tsConfig: _tsConfig, ...options } = config.options;
  const result = await cruise([start], { ...options, baseDir: join(__dirname, '../fixtures/layers'), ruleSet: { forbidden: config.forbidden }, validate: true, outputType: 'json' });
  return (JSON.parse(result.output) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('import boundaries', () => {
  it('passes an import down the layers', async () => {
    expect(await violations('src/processes/demo/model.ts')).toEqual([]);
  });

  it('fails an import up the layers, naming both layers and files', async () => {
    const found = await violations('src/http/upward.ts');
    expect(found.map((v) => [v.rule.name, v.from, v.to])).toEqual([['upward:http->process', 'src/http/upward.ts', 'src/processes/demo/model.ts']]);
  });

  it('fails two folders that import each other', async () => {
    const found = await violations('src/processes/demo');
    // Reported from each folder of the cycle.
    expect(found.map((v) => [v.rule.name, v.from, v.to]).sort()).toEqual([
      ['no-folder-cycles', 'src/processes/demo/left', 'src/processes/demo/right'],
      ['no-folder-cycles', 'src/processes/demo/right', 'src/processes/demo/left'],
    ]);
  });
});
