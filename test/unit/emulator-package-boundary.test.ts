/**
 * Issue 37: the emulator stands apart from what it tests. No file of the emulator package
 * (`packages/emulator/`) imports from longhaul's `src/` or any other folder outside the package, nor a package
 * it does not declare: where the stand-in and the product shared code (a signer, a schema, a constant), a bug
 * in it was invisible. The checker is proven on a package made for it first, so this cannot pass by finding
 * nothing.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { boundaryViolations } from '../helpers/package-boundary';

const EMULATOR = join(__dirname, '..', '..', 'packages', 'emulator');

describe('the emulator package imports nothing from longhaul', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('finds every form of a forbidden import in a package made to have them', async () => {
    const root = await mkdtemp(join(tmpdir(), 'longhaul-boundary-'));
    dirs.push(root);
    const pkg = join(root, 'packages', 'stand-in');
    await mkdir(join(pkg, 'src', 'deep'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@x/stand-in', dependencies: { valibot: '1' } }));
    await writeFile(
      join(pkg, 'src', 'deep', 'a.ts'),
      [
        "import { IMPORT_VCS_TYPES } from '../../../../src/processes/source-import/model';",
        "import type { Schema } from '../../../../src/common/schema';",
        "export { signBody } from '../../../../src/http/signature';",
        "const c = require('../../../../src/config');",
        "const w = import('undici');",
        "import { x } from '/abs/path';",
        "import * as v from 'valibot';",
        "import { join } from 'node:path';",
        "import { own } from '../b';",
        "import { self } from '@x/stand-in';",
      ].join('\n'),
    );
    await writeFile(join(pkg, 'src', 'b.ts'), 'export const own = 1;\n');
    const { violations } = await boundaryViolations(pkg);
    expect(violations.map((v) => v.specifier)).toEqual([
      '../../../../src/processes/source-import/model',
      '../../../../src/common/schema',
      '../../../../src/http/signature',
      '../../../../src/config',
      'undici',
      '/abs/path',
    ]);
  });

  it('packages/emulator: no import leaves the package or names an undeclared package', async () => {
    const { files, imports, violations } = await boundaryViolations(EMULATOR);
    console.log(`packages/emulator: ${files} files, ${imports} imports, ${violations.length} leaving the package`);
    expect(files).toBeGreaterThan(50);
    expect(violations).toEqual([]);
  });
});
