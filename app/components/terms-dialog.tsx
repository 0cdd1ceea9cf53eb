import { Form } from "@remix-run/react";
import { useEffect, useRef } from "react";

/**
 * The first-visit Terms and Conditions dialog. The server renders it open, so it works without
 * JavaScript; with JavaScript it becomes a real modal (focus kept inside, background inert).
 */
export function TermsDialog({ redirectTo }: { redirectTo: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    // Reopened as a modal, the dialog moves focus to its first control (the PDF or its link): someone who had already
    // tabbed to Yes before the page's script ran pressed Enter there instead (seen in an e2e run on a loaded machine).
    const focused = document.activeElement;
    dialog.close();
    dialog.showModal();
    if (focused instanceof HTMLElement && dialog.contains(focused)) focused.focus();
    // Escape must not dismiss it: the person has to answer.
    const onCancel = (e: Event) => e.preventDefault();
    dialog.addEventListener("cancel", onCancel);
    return () => dialog.removeEventListener("cancel", onCancel);
  }, []);
  return (
    <dialog ref={ref} open className="terms-dialog" aria-labelledby="terms-title" aria-describedby="terms-text">
      <h2 id="terms-title">Terms and Conditions</h2>
      <p id="terms-text">Please read the terms and conditions and confirm that you agree to them.</p>
      <iframe src="/terms.pdf" title="Terms and Conditions (PDF)" className="terms-pdf" />
      <p>
        <a href="/terms.pdf" target="_blank" rel="noreferrer">
          Open the terms (PDF) in a new tab
        </a>
      </p>
      <Form method="post" action="/terms" className="terms-actions">
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <button type="submit" name="value" value="yes" className="btn btn-primary">
          Yes
        </button>
        <button type="submit" name="value" value="no" className="btn btn-secondary">
          No
        </button>
      </Form>
    </dialog>
  );
}
