import { Form } from "@remix-run/react";
import type { ReactNode } from "react";
import { MEMBER_ROLES, type MemberRole } from "~/lib/account-schemas";

/** A project role (viewer, editor, manager) as a select; `none` adds a first choice that means no membership. */
export function RoleSelect({
  id,
  name = "role",
  defaultValue,
  none,
}: {
  id: string;
  name?: string;
  defaultValue: MemberRole | "";
  none?: string;
}) {
  return (
    <select id={id} name={name} defaultValue={defaultValue}>
      {none ? <option value="">{none}</option> : null}
      {MEMBER_ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}

/**
 * One membership in the admin console (a project on a user's page, a user on a project's page): its role to change,
 * or Remove. `intent` and `target` say to the page's action which membership it is.
 */
export function MembershipForm({
  intent,
  target,
  id,
  label,
  role,
  removeLabel,
}: {
  intent: string;
  target: Record<string, string>;
  id: string;
  label: ReactNode;
  role: MemberRole;
  removeLabel: string;
}) {
  return (
    <Form method="post" className="inline-form">
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(target).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <label htmlFor={id}>{label}</label>
      <RoleSelect id={id} defaultValue={role} />
      <button type="submit" className="btn">
        Save role
      </button>
      <button type="submit" name="remove" value="yes" className="btn btn-danger" aria-label={removeLabel}>
        Remove
      </button>
    </Form>
  );
}
