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
