/**
 * What one source-import workflow knows and does besides polling (workflow code, not a workflow): the import
 * as last seen, its authors and the mappings, the large-file decision, answers awaited from a person, and the
 * calls that change the import, one at a time. `workflow.ts` drives it; the update handlers share it.
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import type { ImportActivities } from './activities';
import {
  decideLfs,
  desiredIdentity,
  type AuthorMapping,
  type ImportAuthor,
  type ImportRecord,
  type MappedAuthor,
  type SourceImportInput,
  type SourceImportResume,
  type SourceImportStatus,
} from './model';
import { CLEANUP, READ } from '../../workflows/kit/activity-options';
import { keepTrying, type StatusTracker } from '../../workflows/kit';
import { summarized } from '../../workflows/kit/activity-summaries';
import { IMPORT_SUMMARIES } from './summaries';
import { authorsToList, largeFilesToSettle, pollAnswerNeedsWorkflow, type ImportKnowledge } from './machine';

export { CREDENTIAL_STATES } from './machine';

/** Calls that read or change the import: bounded retries, then the session's own outage wait (`call`). */
export const importApi = summarized(proxyActivities<ImportActivities>(READ), IMPORT_SUMMARIES);
/** Cleanup (DELETE the import): retried for a long time, then `keepTrying` on the outage budget. */
export const importCleanup = summarized(proxyActivities<ImportActivities>(CLEANUP), IMPORT_SUMMARIES);

/** Statuses in which every author is known. */
const AUTHORS_KNOWN_STATES = ['mapping', 'pushing', 'complete'];
/** Statuses in which a mapping can no longer reach the repository before the push. */
export const PUSHED_STATES = ['pushing', 'complete'];

export class ImportSession {
  readonly target: { owner: string; repo: string };
  record: ImportRecord | undefined;
  /** Authors as the server has them, by id (listed again after continue-as-new: small, cheap, paged). */
  readonly authors = new Map<number, ImportAuthor>();
  readonly mapped: Map<number, MappedAuthor>;
  readonly mappings: AuthorMapping[];
  readonly warnings: string[];
  /** True once the workflow ends (or hands over to its next run): updates are refused from then on. */
  finished = false;
  /** Bumped by an update that changed the import, so a wait for an answer ends. */
  answers = 0;
  tracker: StatusTracker = { update: () => undefined };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly input: SourceImportInput,
    readonly st: SourceImportStatus,
    resume: SourceImportResume | undefined,
  ) {
    this.target = { owner: input.owner, repo: input.repo };
    this.record = resume?.record;
    this.mappings = [...(resume?.mappings ?? input.authors ?? [])];
    this.warnings = [...(resume?.warnings ?? [])];
    this.mapped = new Map(st.authorsMapped.map((a) => [a.id, a]));
  }

  show(): void {
    this.tracker.update();
  }

  /** Records what the server said about the import. */
  observe(r: ImportRecord): void {
    const { st } = this;
    this.record = r;
    if (st.statesSeen.at(-1) !== r.status) st.statesSeen.push(r.status);
    st.status = r.status;
    st.statusText = r.statusText;
    st.percent = r.percent;
    st.commitCount = r.commitCount ?? st.commitCount;
    st.pushPercent = r.pushPercent;
    st.failedStep = r.failedStep;
    st.errorMessage = r.errorMessage;
    st.projectChoices = r.status === 'detection_found_multiple' ? r.projectChoices : undefined;
    this.show();
  }

  /**
   * Runs an API call; when it gave up on transient trouble (an outage or maintenance longer than the
   * activity's retries: 5xx, HTML error pages, resets, timeouts), calls again after a durable wait on the
   * outage budget. Only a permanent answer, or a budget spent, ends it with the call's failure.
   */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    const { st } = this;
    const phase = st.phase;
    const outcome = await keepTrying(
      async () => {
        try {
          return await fn();
        } catch (err) {
          st.phase = 'waiting-out-outage';
          this.show();
          throw err;
        }
      },
      { outage: this.input.outage },
    );
    if (st.phase === 'waiting-out-outage') st.phase = phase;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** One mutating call at a time: updates and the main loop never PATCH the same import concurrently. */
  serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  authorsComplete(): boolean {
    const r = this.record;
    return r !== undefined && AUTHORS_KNOWN_STATES.includes(r.status) && this.authors.size >= r.authorsCount;
  }

  /** What the state machine needs to know besides the record. */
  knowledge(): ImportKnowledge {
    return { authorsKnown: this.authors.size, lfsDecided: Boolean(this.st.lfs) };
  }

  /** Whether a poll's answer ends the polling (a status that is not running, or news to act on). */
  pollAnswerNeedsWorkflow(r: ImportRecord): boolean {
    return pollAnswerNeedsWorkflow(r, this.knowledge());
  }

  /** PATCHes every known author whose identity differs from what the mappings say. */
  applyMappings(): Promise<MappedAuthor[]> {
    return this.serialized(async () => {
      const changed: MappedAuthor[] = [];
      for (const author of [...this.authors.values()].sort((a, b) => a.id - b.id)) {
        const wanted = desiredIdentity(this.mappings, author);
        if (!wanted || (author.name === wanted.name && author.email === wanted.email)) continue;
        const late = this.record !== undefined && PUSHED_STATES.includes(this.record.status);
        const updated = await this.call(() => importApi.mapImportAuthor({ ...this.target, authorId: author.id, name: wanted.name, email: wanted.email }));
        this.authors.set(updated.id, updated);
        const entry = { id: updated.id, remoteId: updated.remoteId, remoteName: updated.remoteName, name: updated.name, email: updated.email };
        this.mapped.set(updated.id, entry);
        changed.push(entry);
        if (late) this.warnings.push(`author ${updated.remoteId} was mapped after the push began; the server rewrites and pushes again`);
      }
      this.st.authorsMapped = [...this.mapped.values()];
      this.show();
      return changed;
    });
  }

  /** Lists authors found since the last look (`since` paging), then applies the mappings to them. */
  async syncAuthors(): Promise<void> {
    const r = this.record;
    if (!r) return;
    let listed = false;
    while (authorsToList(r, this.knowledge())) {
      const since = this.authors.size > 0 ? Math.max(...this.authors.keys()) : undefined;
      const page = await this.call(() => importApi.listImportAuthors({ ...this.target, since }));
      listed = true;
      if (page.length === 0) break;
      for (const author of page) this.authors.set(author.id, author);
    }
    this.st.authorsFound = this.authors.size;
    this.st.authorsComplete = this.authorsComplete();
    if (listed) await this.applyMappings();
  }

  /** When large files turned up: list them and set `use_lfs` by the policy (once). */
  async settleLargeFiles(): Promise<void> {
    const { st } = this;
    if (!this.record || !largeFilesToSettle(this.record, this.knowledge())) return;
    const files = await this.call(() => importApi.listImportLargeFiles(this.target));
    const decision = decideLfs(this.input.lfs ?? 'opt_in', files);
    if (this.record.useLfs !== decision.useLfs) {
      const r = await this.serialized(() => this.call(() => importApi.setImportLfs({ ...this.target, useLfs: decision.useLfs })));
      st.lfs = decision;
      this.observe(r);
    } else {
      st.lfs = decision;
    }
    this.show();
  }

  /** Waits (bounded) until an update answered; false when the deadline passed. */
  async waitForAnswer(phase: 'waiting-for-credentials' | 'waiting-for-choice', timeoutMs: number): Promise<boolean> {
    const { st } = this;
    const before = this.answers;
    st.phase = phase;
    st.answerDeadline = new Date(Date.now() + timeoutMs).toISOString();
    this.show();
    const answered = await condition(() => this.answers !== before, timeoutMs);
    st.answerDeadline = undefined;
    st.phase = 'polling';
    return answered;
  }

  /** DELETE the import, retried until it succeeds or fails permanently; undefined when done, else what is left to do. */
  async cancelOnServer(): Promise<string | undefined> {
    const outcome = await keepTrying(() => importCleanup.cancelImport(this.target), { outage: this.input.outage, what: `cancel import into ${this.target.owner}/${this.target.repo}` });
    if (outcome.ok) return undefined;
    return `the import could not be cancelled on the server (${outcome.message}): cancel it by hand with DELETE /repos/${this.target.owner}/${this.target.repo}/import`;
  }

  /** What the next run needs, when this one continues as new. */
  resume(poll: SourceImportResume['poll']): SourceImportResume {
    return { status: { ...this.st, runs: this.st.runs + 1 }, mappings: this.mappings, warnings: this.warnings, record: this.record!, poll };
  }
}
