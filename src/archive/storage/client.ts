/**
 * The archive's storage client: the HTTP core's token-less client (no credential ever, the core's decisions,
 * failures and observer, the outbound policy) with the one request only storage gets, a streamed GET over the
 * archive's own transport (`transport.ts`: HTTP/1.1 over a socket reading into one reused buffer).
 */
import { TokenlessClient } from '../../http/tokenless';
import { checkedAddresses, checkOutboundUrl, OutboundRefused, shownUrl } from '../../http/outbound-policy';
import { proxyFor } from '../../http/proxy';
import { rangeHeaders, storageGet, type StorageGet, type StorageResponse } from './transport';

export class StorageClient extends TokenlessClient {
  /**
   * One streamed GET of a storage URL. The answer is returned as it came, 3xx included (the caller checks every
   * hop); judge its status with `judge`. No answer throws the core's `NetworkError`, unless the caller aborted
   * (then the abort's reason).
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
}
