/**
 * Cloud Logging v2 log-bucket activities: one HTTP call each (the operation search pages through a list).
 * `createAsync` / `updateAsync` are guarded by the workflow: after a try whose outcome is unknown it looks
 * for the bucket and its operation (`getLogBucket`, `findLogBucketOperation`) before sending again.
 */
import { googleFor, type ActivityDeps } from '../../../activities/context';
import type { OperationView } from '../model';
import { FailureType } from '../../../http/retry-policy';
import { isFailure, operationView, OPERATION_SHAPE, pick, resourcePath, RESOURCE_SHAPE, unlessNotFound, type GoogleOperation } from './operations';
import { expectShape } from '../../../http/answer';
import { countPoll } from '../../../telemetry/metrics';
import { quietly } from '../../../activities/quiet-poll';
import { LOG_BUCKET_POLLS } from '../names';

const BUCKET_FIELDS = ['name', 'description', 'retentionDays', 'locked', 'lifecycleState', 'analyticsEnabled', 'createTime', 'updateTime'] as const;

export function summarizeBucket(bucket: Record<string, unknown>): Record<string, unknown> {
  const summary = pick(bucket, BUCKET_FIELDS);
  delete summary['@type'];
  return summary;
}

export interface BucketFieldsInput {
  retentionDays?: number;
  description?: string;
  locked?: boolean;
  analyticsEnabled?: boolean;
}

function bucketBody(fields: BucketFieldsInput): Record<string, unknown> {
  return pick(fields as Record<string, unknown>, ['retentionDays', 'description', 'locked', 'analyticsEnabled']);
}

/** What an update sent: the mask and the values of the masked fields. */
export interface BucketUpdateRequest extends BucketFieldsInput {
  updateMask: string[];
}

/**
 * Whether an `updateBucketRequest` (as an operation's metadata reports it) is this update: same bucket, the same
 * set of masked fields and the same value for each. Another client's update of the same bucket, even a recent
 * one, is not ours: adopting it would report an update that never happened.
 */
export function isSameBucketUpdate(request: unknown, bucketName: string, update: BucketUpdateRequest): boolean {
  const req = request as { name?: unknown; updateMask?: unknown; bucket?: Record<string, unknown> } | undefined;
  if (req?.name !== bucketName) return false;
  const sentMask = (typeof req.updateMask === 'string' ? req.updateMask.split(',') : Array.isArray(req.updateMask) ? req.updateMask : [])
    .map((f) => String(f).trim())
    .filter(Boolean);
  const mask = new Set(update.updateMask);
  if (sentMask.length !== mask.size || !sentMask.every((f) => mask.has(f))) return false;
  const wanted = bucketBody(update);
  const sent = req.bucket ?? {};
  return update.updateMask.every((field) => JSON.stringify(sent[field]) === JSON.stringify(wanted[field]));
}

/** What a cancel request came to. */
export interface CancelRequestResult {
  accepted: boolean;
  /** The server's reason when it refused (e.g. the operation had already finished). */
  message?: string;
}

export function createLogBucketActivities(deps: ActivityDeps) {

  const activities = {
    /** POST /v2/{parent}/buckets:createAsync?bucketId= — not idempotent: the workflow guards re-sends. */
    async createLogBucketAsync(input: { parent: string; bucketId: string } & BucketFieldsInput): Promise<OperationView> {
      const res = await googleFor(deps).logging.request<GoogleOperation>({
        method: 'POST',
        path: `/v2/${resourcePath(input.parent)}/buckets:createAsync`,
        query: { bucketId: input.bucketId },
        body: bucketBody(input),
      });
      return operationView(expectShape<GoogleOperation>(res, 'POST', OPERATION_SHAPE), summarizeBucket);
    },

    /** POST /v2/{name}:updateAsync?updateMask= */
    async updateLogBucketAsync(input: { name: string; updateMask: string[] } & BucketFieldsInput): Promise<OperationView> {
      const res = await googleFor(deps).logging.request<GoogleOperation>({
        method: 'POST',
        path: `/v2/${resourcePath(input.name)}:updateAsync`,
        query: { updateMask: input.updateMask.join(',') },
        body: bucketBody(input),
      });
      return operationView(expectShape<GoogleOperation>(res, 'POST', OPERATION_SHAPE), summarizeBucket);
    },

    /** GET /v2/{name} — undefined when the bucket does not exist. */
    async getLogBucket(input: { name: string }): Promise<Record<string, unknown> | undefined> {
      const res = await unlessNotFound(() => googleFor(deps).logging.request<Record<string, unknown>>({ method: 'GET', path: `/v2/${resourcePath(input.name)}` }));
      return res && summarizeBucket(expectShape(res, 'GET', RESOURCE_SHAPE));
    },

    /** GET /v2/{operation name} */
    async getLoggingOperation(input: { name: string }): Promise<OperationView> {
      countPoll(LOG_BUCKET_POLLS);
      const res = await googleFor(deps).logging.request<GoogleOperation>({ method: 'GET', path: `/v2/${resourcePath(input.name)}` });
      return operationView(expectShape<GoogleOperation>(res, 'GET', OPERATION_SHAPE), summarizeBucket);
    },

    /** POST /v2/{operation name}:cancel — asynchronous: whether it took effect shows in the operation later. */
    async cancelLoggingOperation(input: { name: string }): Promise<CancelRequestResult> {
      try {
        await googleFor(deps).logging.request({ method: 'POST', path: `/v2/${resourcePath(input.name)}:cancel`, body: {} });
        return { accepted: true };
      } catch (err) {
        // A finished operation refuses the cancel; the workflow reads the operation to learn how it ended.
        if (isFailure(err, FailureType.FailedPrecondition) || isFailure(err, FailureType.BadRequest)) return { accepted: false, message: err.message };
        throw err;
      }
    },

    /**
     * GET /v2/{parent}/operations?filter=request_type=… (paged) — the newest create (or update) operation of `bucketName` started at
     * or after `notBefore`: the one an earlier try with an unknown outcome started. An update matches only with
     * the same mask and values (`update`); without `update`, no update operation matches.
     */
    async findLogBucketOperation(input: {
      bucketName: string;
      kind: 'create' | 'update';
      notBefore: string;
      update?: BucketUpdateRequest;
    }): Promise<OperationView | undefined> {
      const parent = input.bucketName.replace(/\/buckets\/[^/]+$/, '');
      const bucketId = input.bucketName.slice(parent.length + '/buckets/'.length);
      const notBefore = Date.parse(input.notBefore);
      let pageToken: string | undefined;
      for (let page = 0; page < 20; page++) {
        const res = await googleFor(deps).logging.request<{ operations?: GoogleOperation[]; nextPageToken?: string }>({
          method: 'GET',
          path: `/v2/${resourcePath(parent)}/operations`,
          // The API requires a filter naming the request type (without one the listing is a 400).
          query: { filter: operationsFilter(input.kind, input.notBefore), pageSize: 100, pageToken },
        });
        const candidates = (res.body.operations ?? []).filter((op) => {
          const meta = op.metadata ?? {};
          const started = Date.parse(String(meta.startTime ?? ''));
          if (!(started >= notBefore)) return false;
          if (input.kind === 'create') {
            const req = meta.createBucketRequest as { parent?: string; bucketId?: string } | undefined;
            return req?.parent === parent && req.bucketId === bucketId;
          }
          return input.update !== undefined && isSameBucketUpdate(meta.updateBucketRequest, input.bucketName, input.update);
        });
        if (candidates.length > 0) {
          candidates.sort((a, b) => Date.parse(String(b.metadata?.startTime)) - Date.parse(String(a.metadata?.startTime)));
          return operationView(candidates[0], summarizeBucket);
        }
        pageToken = res.body.nextPageToken;
        if (!pageToken) break;
      }
      return undefined;
    },
  };
  // The same poll as a quiet poll (see quiet-poll.ts): attempts are polls, unchanged ones cost the workflow nothing.
  return { ...activities, quietGetLoggingOperation: quietly(activities.getLoggingOperation) };
}

/**
 * The listing's filter: the request type (required by the API: `CreateBucket` for `createAsync`, `UpdateBucket`
 * for `updateAsync`) and operations started at or after `notBefore` (a timestamp with a time is quoted).
 */
export function operationsFilter(kind: 'create' | 'update', notBefore: string): string {
  const startedSince = Number.isNaN(Date.parse(notBefore)) ? '' : ` AND operation_start_time>="${new Date(Date.parse(notBefore)).toISOString()}"`;
  return `request_type=${kind === 'create' ? 'CreateBucket' : 'UpdateBucket'}${startedSince}`;
}
