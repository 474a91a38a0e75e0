/**
 * Credentials in URLs are refused (issue 8, item 8): a table of URLs with and without secrets. Token-like
 * strings come from test/helpers/fake-secrets.ts (built by concatenation).
 */
import { describe, expect, it } from 'vitest';
import { credentialInUrlProblems } from '../../src/common/url-secrets';
import { feedRunProblems, parseSinkSpec, type SinkConfig } from '../../src/processes/feed-poll/model';
import { AWS, fill, GHO, GHP, GHR, GHS, GHU, GLPAT, GOOGLE_KEY, PAT, SLACK_BOT, SLACK_USER } from '../helpers/fake-secrets';


const refused: [string, string, RegExp][] = [
  ['user and password', 'https://user:pa55@hooks.example.com/x', /user-info/],
  ['user only (a token as user name)', `https://${GHP}@github.com/o/r.git`, /GitHub personal access token/],
  ['access_token parameter', 'https://hooks.example.com/x?access_token=abc', /"access_token"/],
  ['token parameter, any case', 'https://hooks.example.com/x?Token=abc', /"token"/],
  ['sig parameter (pre-signed URL)', 'https://storage.example.com/b/o?sv=2020&sig=abc%3D', /"sig"/],
  ['X-Amz-Signature', 'https://s3.example.com/b/o?X-Amz-Signature=abc&X-Amz-Credential=x', /"x-amz-signature"/],
  ['Google API key parameter', 'https://logging.example.com/v2?key=abc', /"key"/],
  ['secret in the fragment', 'https://hooks.example.com/x#access_token=abc', /"access_token"/],
  ['ghp_ in the path', `https://hooks.example.com/${GHP}/events`, /ghp_/],
  ['gho_ in a harmless parameter', `https://hooks.example.com/x?state=${GHO}`, /gho_/],
  ['ghu_', `https://hooks.example.com/x/${GHU}`, /ghu_/],
  ['ghs_', `https://hooks.example.com/x/${GHS}`, /ghs_/],
  ['ghr_', `https://hooks.example.com/x/${GHR}`, /ghr_/],
  ['github_pat_', `https://hooks.example.com/x?q=${PAT}`, /github_pat_/],
  ['glpat-', `https://gitlab.example.com/${GLPAT}/repo.git`, /glpat-/],
  ['xoxb-', `https://hooks.slack.example.com/services/${SLACK_BOT}`, /Slack/],
  ['xoxp-', `https://hooks.slack.example.com/services/${SLACK_USER}`, /Slack/],
  ['AKIA', `https://s3.example.com/${AWS}/o`, /AWS/],
  ['AIza', `https://hooks.example.com/x/${GOOGLE_KEY}`, /Google API key/],
  ['percent-encoded token', `https://hooks.example.com/x/%67hp_${fill(36, 'Z')}`, /ghp_/],
];

const accepted: [string, string][] = [
  ['plain https', 'https://hooks.example.com/github/events'],
  ['port and path', 'http://127.0.0.1:8080/hook'],
  ['harmless parameters', 'https://hooks.example.com/x?feed=events&page=2&tokenizer=simple'],
  ['a short ghp_ that is not a token', 'https://hooks.example.com/ghp_docs'],
  ['a repository named like a prefix', 'https://github.com/octo-org/github_pat_docs.git'],
];

describe('credentialInUrlProblems', () => {
  it.each(refused)('refuses %s', (_name, url, why) => {
    const problems = credentialInUrlProblems(url, 'the http sink url');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).toMatch(why);
    for (const p of problems) {
      expect(p).toMatch(/^the http sink url /);
      // Says how to pass the secret instead…
      expect(p).toMatch(/--sink-secret NAME/);
      expect(p).toMatch(/secret: "NAME"/);
    }
    // …and never repeats the secret.
    for (const secret of [GHP, GHO, PAT, GLPAT, AWS, 'pa55']) expect(problems.join('\n')).not.toContain(secret);
  });

  it.each(accepted)('accepts %s', (_name, url) => {
    expect(credentialInUrlProblems(url, 'vcsUrl')).toEqual([]);
  });

  it('names the field it was given and reports every problem of one URL', () => {
    const problems = credentialInUrlProblems(`https://u:p@example.com/x?access_token=1&sig=2&path=${GHP}`, 'vcsUrl');
    expect(problems).toHaveLength(4);
    for (const p of problems) expect(p.startsWith('vcsUrl ')).toBe(true);
  });

  it('checks a value that is not a URL for token patterns only', () => {
    expect(credentialInUrlProblems('not a url', 'vcsUrl')).toEqual([]);
    expect(credentialInUrlProblems(`git@github.com:${GHP}`, 'vcsUrl')).toHaveLength(1);
    expect(credentialInUrlProblems('', 'vcsUrl')).toEqual([]);
  });
});

describe('sink validation refuses credentials in the URL (workflow input and CLI)', () => {
  it('refuses an http sink whose URL carries a secret, and accepts it by reference', () => {
    const withSecret: SinkConfig = { kind: 'http', url: 'https://hooks.example.com/x?access_token=abc' };
    expect(feedRunProblems({ feed: '/events', sink: withSecret }).join('\n')).toMatch(/"access_token".*--sink-secret NAME/);
    const spec = parseSinkSpec(`https://me:${GHP}@hooks.example.com/x`);
    expect('problem' in spec).toBe(false);
    expect(feedRunProblems({ feed: '/events', sink: spec as SinkConfig }).join('\n')).toMatch(/user-info/);
    expect(feedRunProblems({ feed: '/events', sink: { kind: 'http', url: 'https://hooks.example.com/x', secret: 'hooks' } })).toEqual([]);
  });
});

describe('secrets in a source-import vcsUrl', () => {
  it('refuses a password or token in the URL, naming the credentials reference to use, and accepts an ssh user name', async () => {
    const { importInputProblems } = await import('../../src/processes/source-import/model');
    const base = { owner: 'octo-org', repo: 'alpha' };
    const token = 'gh' + 'p_' + 'Z'.repeat(36);
    expect(importInputProblems({ ...base, vcsUrl: 'ssh://git@github.com/o/r.git' })).toEqual([]);
    for (const vcsUrl of ['https://u:pw@svn.example.test/r', `https://svn.example.test/r?token=${token}`, `https://${token}@svn.example.test/r`]) {
      const problems = importInputProblems({ ...base, vcsUrl });
      expect(problems.join('; ')).toMatch(/vcsUrl .*--credentials NAME/);
      expect(problems.join('; ')).not.toContain(token);
    }
  });
});
