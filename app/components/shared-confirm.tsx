import { SHARED_BOARD_WARNING } from "~/lib/bulk-ops";

/** The client-level board's confirmation (`confirmShared`), for a form that changes a board every user sees. */
export function SharedConfirm({ errors }: { errors?: string[] | null }) {
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" name="confirmShared" value="yes" aria-describedby="confirm-shared-error" />
        {SHARED_BOARD_WARNING} I understand.
      </label>
      <p id="confirm-shared-error" className="field-error">
        {errors?.[0] ?? ""}
      </p>
    </div>
  );
}
