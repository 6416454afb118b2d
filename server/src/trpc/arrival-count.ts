/**
 * The global limit's count of one HTTP request made when it arrived, before its body was read
 * (`countGlobalOnArrival`): the rate limit headers that count wrote (`RateLimit-Policy`, `RateLimit`).
 */
export interface ArrivalCount {
  headers: Record<string, string>;
}

const counted = new WeakMap<object, ArrivalCount>();

/** Notes that `request` was counted against the global limit on arrival (`count`: what that count answered). */
export function recordArrivalCount(request: object, count: ArrivalCount): void {
  counted.set(request, count);
}

/**
 * The arrival count of `request`, once: the first of its calls takes it and counts only its procedure's own
 * limit, so a request of N calls still spends N of the global budget (one on arrival, one per further call).
 * Undefined when the request was not counted on arrival, or its count was taken already.
 */
export function takeArrivalCount(request: object): ArrivalCount | undefined {
  const count = counted.get(request);
  counted.delete(request);
  return count;
}
