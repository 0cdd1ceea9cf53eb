import { Form, Link } from "@remix-run/react";
import { useState } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { formErrorsOf, type FormAnswer } from "~/lib/form-answer";
import { ATTRIBUTE_MESSAGES, MAX_ACTIVE_ATTRIBUTES, SMART_NAME_MAX, smartNameProblem } from "~/lib/attribute-rules";
import { showTypedAttributeName } from "./create-attribute-form";
import { SubmitButton, usePending } from "./forms";

export interface AttributeItem {
  id: number;
  name: string;
  code: string;
  active: boolean;
  type: 1 | 2 | 3;
}

/** What Save answered when it refused: the rows as posted, each row's problem, and the form's (in its result). */
export interface AttributesAnswer extends FormAnswer<"save"> {
  rows: Omit<AttributeItem, "type">[];
  rowErrors: Record<number, string>;
}

const TYPES: Record<number, string> = { 1: "1 · WSC imported", 2: "2 · system created", 3: "3 · user created" };

/**
 * The project's attributes, editable in place by managers: one form, so it works without JavaScript (the server
 * checks every rule and the limit of 33 active). With JavaScript, changed rows are tracked, Save is enabled only
 * with a change and no smart-name error, and a 34th active attribute is refused as it is ticked.
 */
export function AttributesTable({
  projectId,
  attributes,
  canManage,
  answer,
}: {
  projectId: number;
  attributes: AttributeItem[];
  canManage: boolean;
  answer: AttributesAnswer | null;
}) {
  // A refused save comes back with what was typed; otherwise the stored list (a new one after each save).
  const start = answer?.rows ? attributes.map((a) => ({ ...a, ...answer.rows!.find((r) => r.id === a.id) })) : attributes;
  return (
    <AttributesForm
      key={JSON.stringify(attributes) + (answer?.rows ? "posted" : "")}
      projectId={projectId}
      stored={attributes}
      start={start}
      canManage={canManage}
      answer={answer}
    />
  );
}

function AttributesForm({
  projectId,
  stored,
  start,
  canManage,
  answer,
}: {
  projectId: number;
  stored: AttributeItem[];
  start: AttributeItem[];
  canManage: boolean;
  answer: AttributesAnswer | null;
}) {
  const hydrated = useHydrated();
  const pending = usePending();
  const [rows, setRows] = useState(start);
  const [limitHit, setLimitHit] = useState(false);
  const original = new Map(stored.map((a) => [a.id, a]));
  const changed = rows.filter((r) => {
    const o = original.get(r.id);
    return !o || o.name !== r.name || o.code !== r.code || o.active !== r.active;
  });
  const codeErrors = new Map(rows.map((r) => [r.id, smartNameProblem(r.code)]));
  const anyCodeError = [...codeErrors.values()].some(Boolean);
  const active = rows.filter((r) => r.active).length;
  const update = (id: number, patch: Partial<AttributeItem>) => setRows((list) => list.map((r) => (r.id === id ? { ...r, ...patch } : r)));
  const formError = limitHit
    ? `${ATTRIBUTE_MESSAGES.activeLimit}. ${ATTRIBUTE_MESSAGES.activeLimitHelp}`
    : (formErrorsOf(answer?.result)[0] ?? null);
  return (
    <Form method="post" className="attributes-form" aria-label="Attributes">
      <input type="hidden" name="intent" value="save" />
      <p className="muted" aria-live="polite">
        {active} of {MAX_ACTIVE_ATTRIBUTES} active
        {hydrated && canManage ? ` · ${changed.length} changed` : ""}
      </p>
      <div className="form-error" role="alert">
        {formError}
      </div>
      <div className="table-scroll">
        <table className="data-table attributes-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Smart name</th>
              <th scope="col">Active</th>
              <th scope="col">Type</th>
              {canManage ? <th scope="col">Delete</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const rowError = (hydrated ? codeErrors.get(r.id) : null) ?? answer?.rowErrors?.[r.id] ?? null;
              const errorId = `attribute-${r.id}-error`;
              const label = original.get(r.id)?.name ?? r.name;
              return (
                <tr key={r.id} className={changed.includes(r) ? "changed" : undefined}>
                  <td>
                    {canManage ? <input type="hidden" name="id" value={r.id} /> : null}
                    {canManage ? (
                      <input
                        name={`name-${r.id}`}
                        aria-label={`Name of ${label}`}
                        value={r.name}
                        maxLength={64}
                        autoComplete="off"
                        aria-invalid={rowError ? true : undefined}
                        aria-describedby={rowError ? errorId : undefined}
                        onChange={(e) => {
                          // Changed in place first, so React finds the field already holding the new state (the caret stays).
                          showTypedAttributeName(e.currentTarget);
                          update(r.id, { name: e.currentTarget.value });
                        }}
                      />
                    ) : (
                      r.name
                    )}
                  </td>
                  <td>
                    {canManage ? (
                      <input
                        name={`code-${r.id}`}
                        aria-label={`Smart name of ${label}`}
                        value={r.code}
                        maxLength={SMART_NAME_MAX + 8}
                        autoComplete="off"
                        aria-invalid={rowError ? true : undefined}
                        aria-describedby={rowError ? errorId : undefined}
                        onChange={(e) => update(r.id, { code: e.currentTarget.value })}
                      />
                    ) : (
                      r.code
                    )}
                    <p id={errorId} className="field-error">
                      {rowError}
                    </p>
                  </td>
                  <td>
                    <div className="cell-line">
                      <input
                        type="checkbox"
                        name={`active-${r.id}`}
                        aria-label={`${label} active`}
                        checked={r.active}
                        disabled={!canManage}
                        onChange={(e) => {
                          const on = e.currentTarget.checked;
                          if (on && active >= MAX_ACTIVE_ATTRIBUTES) return setLimitHit(true);
                          setLimitHit(false);
                          update(r.id, { active: on });
                        }}
                      />
                    </div>
                  </td>
                  <td>
                    <div className="cell-line">{TYPES[r.type]}</div>
                  </td>
                  {canManage ? (
                    <td>
                      {r.type === 3 ? (
                        <Link
                          to={`/upload/${projectId}/attributes/${r.id}/delete`}
                          className="btn btn-danger"
                          aria-label={`Delete ${label}`}
                        >
                          Delete
                        </Link>
                      ) : (
                        <div className="cell-line muted">Cannot delete this attribute</div>
                      )}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {canManage ? (
        // Kept in view at the window's foot however long the list is (35 rows and more).
        <div className="sticky-actions">
          <SubmitButton pending={pending} pendingText="Saving…" disabled={hydrated && (!changed.length || anyCodeError)}>
            Save
          </SubmitButton>
        </div>
      ) : null}
    </Form>
  );
}
