/**
 * The last look at the rate limits, at the moment undici writes a request to its socket.
 *
 * `ApiClient` refuses a request while a wait is known before it asks for a permit and again after, but a request
 * it lets through can still sit in undici's queue (a connection being opened, a pool at its limit) while another
 * request's answer closes the API. Checked only before `request()`, such a request goes out after this process
 * learned of the wait: the "sent while limited" the fleet promises never to do. undici calls a handler's
 * `onRequestStart` synchronously just before it writes the request's headers, so a check there and the send are
 * one step of the event loop: nothing this process learns can fall between them.
 */
import { DecoratorHandler, type Dispatcher } from 'undici';

/** The request was not written: the API was closed for it at the moment of sending. */
export class ClosedAtSend extends Error {
  constructor(
    /** @format milliseconds — how long the API stays closed for this request. */
    readonly waitMs: number,
  ) {
    super(`not sent: the API is closed for another ${Math.ceil(waitMs / 1000)} s`);
    this.name = 'ClosedAtSend';
  }
}

/** `handler`, with the check first in `onRequestStart`: undici calls it as it is about to write the request. */
function checkAtSend(handler: Dispatcher.DispatchHandler, closedForMs: () => number, admitted: () => void): Dispatcher.DispatchHandler {
  // DecoratorHandler speaks undici's current handler API whichever one `handler` speaks (`request()`'s is the older).
  const inner: Dispatcher.DispatchHandler = new DecoratorHandler(handler);
  return {
    onRequestStart(controller, context) {
      const waitMs = closedForMs();
      // undici hands the abort's reason to the caller (through onResponseError); the request is never written.
      if (waitMs > 0) return controller.abort(new ClosedAtSend(waitMs));
      admitted();
      inner.onRequestStart?.(controller, context);
    },
    onRequestUpgrade: (controller, statusCode, headers, socket) => inner.onRequestUpgrade?.(controller, statusCode, headers, socket),
    onResponseStart: (controller, statusCode, headers, statusMessage) => inner.onResponseStart?.(controller, statusCode, headers, statusMessage),
    onResponseData: (controller, chunk) => inner.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => inner.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => inner.onResponseError?.(controller, error),
  };
}

/**
 * `dispatcher`, refusing (with `ClosedAtSend`) every request for which `closedForMs()` is above 0 when it is written;
 * `admitted()` is called for each request that passed, as it is written.
 */
export function checkedAtSend(dispatcher: Dispatcher, closedForMs: () => number, admitted: () => void = () => {}): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => dispatch(opts, checkAtSend(handler, closedForMs, admitted)));
}
