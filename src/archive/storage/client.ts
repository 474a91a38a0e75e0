/**
 * The archive's storage client: the HTTP core's token-less client (no credential ever, the core's decisions,
 * failures and observer, the outbound policy) with what only storage gets: a streamed GET over the archive's own
 * transport (`transport.ts`: HTTP/1.1 over a socket reading into one reused buffer), the retry policy built from
 * the one judge of a storage answer (`answer.ts`), and what every transfer does about an answer that is not the
 * archive's bytes (`answer`): the download to disk and the upload's source alike.
 */
import { flattenHeaders } from '../../http/api-client';
import { TokenlessClient, type TokenlessOptions } from '../../http/tokenless';
import { checkedAddresses, checkOutboundUrl, OutboundRefused, shownUrl } from '../../http/outbound-policy';
import { proxyFor } from '../../http/proxy';
import { judgeStorageStatus, STORAGE_RETRY_POLICY } from './answer';
import { excerpt } from './checks';
import { storageFailure } from './failures';
import { discard, rangeHeaders, readHead, storageGet, type StorageGet, type StorageResponse } from './transport';

/** How many fresh URLs a transfer has asked the API for after storage refused one (403), and may ask at most. */
export interface Reasks {
  used: number;
  max: number;
}

export class StorageClient extends TokenlessClient {
  constructor(opts: TokenlessOptions) {
    super({ policy: STORAGE_RETRY_POLICY, ...opts });
  }

  /**
   * One streamed GET of a storage URL. The answer is returned as it came, 3xx included (the caller checks every
   * hop); judge it with `answer`. No answer throws the core's `NetworkError`, unless the caller aborted (then the
   * abort's reason).
   */
  async get(url: URL, opts: StorageGet = {}): Promise<StorageResponse> {
    try {
      // Once per connection, before it is made: the socket goes to the address that was checked.
      const ctx = await this.outboundContext();
      checkOutboundUrl(url, ctx);
      const [address] = await checkedAddresses(url.hostname, ctx, this.opts.resolve, shownUrl(url));
      const proxy = proxyFor(url, this.network());
      return await storageGet(url, this.headers(rangeHeaders(opts)), { ...opts, address, ...(proxy ? { proxy } : {}) });
    } catch (err) {
      if (err instanceof OutboundRefused) throw this.refused(err, 'GET', url);
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw this.failure(this.networkFailure('GET', err), 'GET', url);
    }
  }

  /**
   * Judges one storage answer (told to the observer) and throws the failure it means, the same for every path:
   * transient → the core's retryable failure, after the wait it decided (`resumes` says where the next attempt
   * resumes); a refused pre-signed URL once `reasks` are spent → `ArchiveAccessDenied`; gone → `ArchiveGone`;
   * anything else → the core's permanent failure, or `UnexpectedResponseError`. What is left for the caller:
   * `ok` (the body is the caller's), `ask-again` (ask the API for a fresh URL; the body is consumed) and
   * `out-of-range` (a 416; the body is consumed).
   */
  async answer(res: StorageResponse, url: URL, reasks: Reasks, resumes = ''): Promise<'ok' | 'ask-again' | 'out-of-range'> {
    const status = res.statusCode;
    const decision = this.judge('GET', status, flattenHeaders(res.headers));
    const verdict = judgeStorageStatus(status);
    if (verdict === 'ok') return 'ok';
    if (verdict === 'transient' && decision.kind === 'retry') {
      discard(res.body);
      throw this.failure({ ...decision, message: `storage answered ${status}${resumes}` }, 'GET', url);
    }
    if (verdict === 'out-of-range') {
      discard(res.body);
      return 'out-of-range';
    }
    const body = excerpt(await readHead(res.body));
    if (verdict === 'ask-again' && reasks.used < reasks.max) {
      reasks.used++;
      return 'ask-again';
    }
    if (verdict === 'ask-again') throw storageFailure('archive', 'AccessDenied', `storage refused the archive URL ${reasks.used + 1} times (403, ${body})`);
    if (verdict === 'gone') throw storageFailure('archive', 'Gone', `storage has no such archive (${status}, ${body}); it may have been deleted`);
    const message = `storage answered ${status} (${body}) instead of the archive`;
    if (decision.kind !== 'success') throw this.failure({ ...decision, message }, 'GET', url);
    throw storageFailure('http', 'UnexpectedResponse', message);
  }
}
