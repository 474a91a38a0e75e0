/**
 * The README is the front door and docs/ holds the design: every relative link in them must lead somewhere.
 * Files are moved and headings renamed as the code changes; this keeps the links from rotting silently.
 * Checks relative file links (files or folders in the repository) and `#anchors` against the headings of the
 * target Markdown file, slugged as GitHub does. External (`http(s):`, `mailto:`) links are not fetched.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's heading anchor: lower case, punctuation dropped (hyphens and underscores kept), spaces → hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

function headingAnchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const line of text.split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

function links(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/** The links of `doc` (its text, unless given) that lead nowhere. */
function broken(doc: string, text?: string): string[] {
  const file = join(ROOT, doc);
  const problems: string[] = [];
  for (const link of links(text ?? readFileSync(file, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [path, anchor] = link.split('#', 2);
    const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!existsSync(target)) {
      problems.push(`${doc}: ${link} (no file ${path})`);
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && !headingAnchors(target).has(anchor)) {
      problems.push(`${doc}: ${link} (no heading #${anchor})`);
    }
  }
  return problems;
}

describe('documentation links', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug("Google's error model in the HTTP core")).toBe('googles-error-model-in-the-http-core');
    expect(slug('Production stack (docker compose)')).toBe('production-stack-docker-compose');
    expect(slug('The workflow kit (`src/workflows/kit/`)')).toBe('the-workflow-kit-srcworkflowskit');
  });

  it('reports missing files and headings, and skips code and external links (the check can fail)', () => {
    const text = 'see [a](nowhere.md), [b](docs/architecture.md#no-such-heading), [c](docs/architecture.md#layers), `[d](code.md)`, [e](https://example.com), [f](#quick-start)';
    expect(broken('README.md', text)).toEqual([
      'README.md: nowhere.md (no file nowhere.md)',
      'README.md: docs/architecture.md#no-such-heading (no heading #no-such-heading)',
    ]);
  });

  it.each(DOCS)('every relative link in %s resolves', (doc) => {
    expect(broken(doc)).toEqual([]);
  });
});
