/**
 * Activity-event pages checked against GitHub's official description, with its one known defect worked around:
 * the event `payload` is a `oneOf` of sixteen per-type schemas, but `public-event` requires nothing (it matches
 * every payload) and `create-event` requires all that `delete-event` does, so no real payload but a PublicEvent's
 * `{}` matches exactly one. A page is therefore checked in two exact parts: the envelope (every event with payload
 * `{}`, which only `public-event` matches) against the route's schema, and each payload against the schema of its
 * own `type`; and the whole body may fail only in that `oneOf`, with the event's own type among the passing schemas.
 */
import { readFileSync } from 'node:fs';
import { payloadSchemaName } from '../../packages/emulator/src/github/feed-event-payloads';
import { checkGithubAnswer, checkGithubSchema } from './github-openapi';

export const PAYLOAD_ONE_OF_EXCEPTION =
  "the description's event payload oneOf is ambiguous (public-event requires nothing, so every payload matches two or more); envelope and per-type payload checked exactly";

let oneOf: string[] | undefined;
function payloadOneOf(): string[] {
  if (!oneOf) {
    const doc = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as {
      components: { schemas: { event: { properties: { payload: { oneOf: { $ref: string }[] } } } } };
    };
    oneOf = doc.components.schemas.event.properties.payload.oneOf.map((s) => s.$ref.split('/').pop()!);
  }
  return oneOf;
}

interface EventLike {
  id: string;
  type: string;
  payload: Record<string, unknown>;
}

/** Problems of one 200 page of events at `path` (empty when it is right); `usedException` when only the oneOf failed. */
export function checkEventPage(path: string, events: EventLike[]): { problems: string[]; usedException: boolean } {
  const problems = checkGithubAnswer('GET', path, 200, events.map((e) => ({ ...e, payload: {} }))).errors.map((e) => `envelope ${e}`);
  for (const e of events) problems.push(...checkGithubSchema(payloadSchemaName(e.type), e.payload).errors.map((x) => `${e.type} ${e.id} payload ${x}`));
  const whole = checkGithubAnswer('GET', path, 200, events);
  for (const error of whole.errors) {
    const m = /^\/(\d+)\/payload(\/|\s)/.exec(error);
    if (!m) {
      problems.push(`outside the payload: ${error}`);
      continue;
    }
    const passing = /passingSchemas":\[([\d,]+)\]/.exec(error);
    const own = payloadOneOf().indexOf(payloadSchemaName(events[Number(m[1])].type));
    if (passing && !passing[1].split(',').map(Number).includes(own)) problems.push(`its own type's schema does not pass: ${error}`);
  }
  return { problems, usedException: !whole.valid };
}
