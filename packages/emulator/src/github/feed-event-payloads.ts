/**
 * Per-type payloads of emulated activity events, each carrying what GitHub's official description
 * (`@octokit/openapi`, the `event` schema's per-type payload schemas) requires of its type: `ref_type` for
 * creates and deletes, `action` for watches, issues, comments, pull requests and releases, full issue, comment
 * and release objects with their users. Push events carry `{repository_id, push_id, ref, head, before}` only,
 * as the seed (spec 001) and the current description give them: since 2025 GitHub no longer lists commits (nor
 * `size`, `distinct_size`) in push events. `DiscussionEvent` (in the description since 2025) carries a discussion.
 *
 * Each payload names the one text field a large event of its type really has (an issue's body, a comment's
 * body, a release's notes), so realistic sizes are reached there and nowhere else.
 */
import { createHash } from 'node:crypto';
import { accountObject, type Account, type Repository } from './fixture';

export const EVENT_TYPES = ['PushEvent', 'CreateEvent', 'DeleteEvent', 'WatchEvent', 'PullRequestEvent', 'IssuesEvent', 'IssueCommentEvent', 'ReleaseEvent', 'DiscussionEvent'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The types whose payload has a large text field (an event larger than its natural size is one of these). */
export const TEXT_EVENT_TYPES: readonly EventType[] = ['IssuesEvent', 'IssueCommentEvent', 'IssueCommentEvent', 'ReleaseEvent', 'DiscussionEvent'];

/** The everyday mix (a push most often), by weight: one entry per share. */
const MIX: readonly EventType[] = ['PushEvent', 'PushEvent', 'PushEvent', 'PushEvent', 'CreateEvent', 'DeleteEvent', 'WatchEvent', 'WatchEvent', 'PullRequestEvent', 'PullRequestEvent', 'IssuesEvent', 'IssueCommentEvent', 'IssueCommentEvent', 'ReleaseEvent', 'DiscussionEvent'];

/** Event `id`'s type in the everyday mix (a hash of the id, so neighbouring ids differ). */
export function mixedEventType(id: number): EventType {
  return MIX[createHash('sha1').update(`type:${id}`).digest().readUInt32BE(0) % MIX.length];
}

export interface PayloadContext {
  id: number;
  apiUrl: string;
  repo: Repository;
  actor: Account;
  /** When the event happened. @format milliseconds */
  at: number;
}

export interface BuiltPayload {
  payload: Record<string, unknown>;
  /** Sets the type's large text field (absent for types that have none). */
  setText?: (text: string) => void;
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');
const nodeId = (kind: string, id: number) => Buffer.from(`${kind}${id}`).toString('base64');
const HTML = 'https://github.example.test';

function issueObject(c: PayloadContext, number: number) {
  const repoApi = `${c.apiUrl}/repos/${c.repo.owner}/${c.repo.name}`;
  const url = `${repoApi}/issues/${number}`;
  const created = new Date(c.at - 3_600_000).toISOString();
  return {
    url,
    repository_url: repoApi,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${HTML}/${c.repo.owner}/${c.repo.name}/issues/${number}`,
    id: c.id * 3,
    node_id: nodeId('I_', c.id),
    number,
    title: `Feed cursor skips events when page ${number % 7} moves`,
    user: accountObject(c.apiUrl, c.actor),
    labels: [],
    state: 'open',
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: c.id % 5,
    created_at: created,
    updated_at: new Date(c.at).toISOString(),
    closed_at: null,
    author_association: 'MEMBER',
    body: '',
  };
}

/** The payload of `type` for event `c.id`; deterministic in the id. */
export function buildPayload(type: EventType, c: PayloadContext): BuiltPayload {
  const { id, repo } = c;
  const repoApi = `${c.apiUrl}/repos/${repo.owner}/${repo.name}`;
  const branch = `feature-${id % 17}`;
  const number = (id % 9_000) + 1;
  switch (type) {
    case 'PushEvent':
      return { payload: { repository_id: repo.id, push_id: id * 7, ref: `refs/heads/${branch}`, head: sha(`head${id}`), before: sha(`before${id}`) } };
    case 'CreateEvent':
      return { payload: { ref: branch, ref_type: 'branch', full_ref: `refs/heads/${branch}`, master_branch: 'main', description: null, pusher_type: 'user' } };
    case 'DeleteEvent':
      return { payload: { ref: branch, ref_type: 'branch', full_ref: `refs/heads/${branch}`, pusher_type: 'user' } };
    case 'WatchEvent':
      return { payload: { action: 'started' } };
    case 'PullRequestEvent': {
      const side = (ref: string, s: string) => ({ ref, sha: sha(`${s}${id}`), repo: { id: repo.id, url: repoApi, name: repo.name } });
      return { payload: { action: id % 3 === 0 ? 'closed' : 'opened', number, pull_request: { id: id * 5, number, url: `${repoApi}/pulls/${number}`, head: side(branch, 'head'), base: side('main', 'base') } } };
    }
    case 'IssuesEvent': {
      const issue = issueObject(c, number);
      return { payload: { action: 'opened', issue }, setText: (text) => (issue.body = text) };
    }
    case 'IssueCommentEvent': {
      const issue = issueObject(c, number);
      const commentId = id * 11;
      const comment = {
        url: `${repoApi}/issues/comments/${commentId}`,
        html_url: `${issue.html_url}#issuecomment-${commentId}`,
        issue_url: issue.url,
        id: commentId,
        node_id: nodeId('IC_', commentId),
        user: accountObject(c.apiUrl, c.actor),
        created_at: new Date(c.at).toISOString(),
        updated_at: new Date(c.at).toISOString(),
        author_association: 'MEMBER',
        body: '',
      };
      return { payload: { action: 'created', issue, comment }, setText: (text) => (comment.body = text) };
    }
    case 'ReleaseEvent': {
      const releaseId = id * 13;
      const tag = `v${(id % 9) + 1}.${id % 13}.${id % 7}`;
      const url = `${repoApi}/releases/${releaseId}`;
      const release = {
        url,
        assets_url: `${url}/assets`,
        upload_url: `https://uploads.example.test/repos/${repo.owner}/${repo.name}/releases/${releaseId}/assets{?name,label}`,
        html_url: `${HTML}/${repo.owner}/${repo.name}/releases/tag/${tag}`,
        id: releaseId,
        node_id: nodeId('RE_', releaseId),
        author: accountObject(c.apiUrl, c.actor),
        tag_name: tag,
        target_commitish: 'main',
        name: tag,
        draft: false,
        prerelease: false,
        created_at: new Date(c.at - 600_000).toISOString(),
        published_at: new Date(c.at).toISOString(),
        assets: [],
        tarball_url: `${repoApi}/tarball/${tag}`,
        zipball_url: `${repoApi}/zipball/${tag}`,
        body: '',
      };
      return { payload: { action: 'published', release }, setText: (text) => (release.body = text) };
    }
    case 'DiscussionEvent': {
      const discussionId = id * 17;
      const html = `${HTML}/${repo.owner}/${repo.name}/discussions/${number}`;
      const discussion = {
        repository_url: repoApi,
        category: { id: (id % 4) + 1, node_id: nodeId('DIC_', (id % 4) + 1), repository_id: repo.id, emoji: ':speech_balloon:', name: 'General', description: 'Chat about anything', created_at: new Date(Date.UTC(2024, 0, 1)).toISOString(), updated_at: new Date(Date.UTC(2024, 0, 1)).toISOString(), slug: 'general', is_answerable: false },
        answer_html_url: null,
        answer_chosen_at: null,
        answer_chosen_by: null,
        html_url: html,
        id: discussionId,
        node_id: nodeId('D_', discussionId),
        number,
        title: `Retention of the activity feed after ${(id % 29) + 1} days`,
        user: accountObject(c.apiUrl, c.actor),
        state: 'open',
        state_reason: null,
        locked: false,
        comments: 0,
        created_at: new Date(c.at).toISOString(),
        updated_at: new Date(c.at).toISOString(),
        author_association: 'MEMBER',
        active_lock_reason: null,
        body: '',
      };
      return { payload: { action: 'created', discussion }, setText: (text) => (discussion.body = text) };
    }
  }
}

/**
 * An event as `version` answers it: 2026-03-10 removes the singular `assignee` from issues and pull requests in
 * event payloads (changeset remove_singular_assignee_from_issues_and_pull_requests, on every feed path).
 */
export function eventForApiVersion<E extends Record<string, unknown>>(event: E, version: '2022-11-28' | '2026-03-10'): E {
  const payload = event.payload as Record<string, unknown> | undefined;
  const issue = payload?.issue as Record<string, unknown> | undefined;
  if (version === '2022-11-28' || !issue || !('assignee' in issue)) return event;
  const { assignee: _dropped, ...rest } = issue;
  return { ...event, payload: { ...payload, issue: rest } };
}

/** The description's payload schema of each event type (`PushEvent` → `push-event`). */
export function payloadSchemaName(type: string): string {
  return type.replace(/Event$/, '').replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase() + '-event';
}
