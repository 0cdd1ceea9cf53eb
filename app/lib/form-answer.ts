import type { SubmissionResult } from "@conform-to/react";

/**
 * What a page's action answers a form it did not redirect: which of the page's forms posted (`intent`) and Conform's
 * result for it. One shape for every form, so a page with several forms shows each its own errors and no other's.
 */
export interface FormAnswer<I extends string = string> {
  intent: I;
  result: SubmissionResult<string[]>;
}

/** The result for the form of `intent` when the page's last answer was for it; for `useForm({ lastResult })`. */
export function resultOf(
  answer: { intent?: unknown; result?: SubmissionResult<string[]> | null } | null | undefined,
  intent: string,
): SubmissionResult<string[]> | undefined {
  return answer?.intent === intent ? (answer.result ?? undefined) : undefined;
}

/** The form-level messages of a result (a form without Conform's fields shows them with FormError). */
export const formErrorsOf = (result: SubmissionResult<string[]> | null | undefined): string[] => result?.error?.[""] ?? [];
