import type { HeaderContext } from "~/components/header";
import { logoUrl } from "~/lib/media";
import type { MemberScope } from "~/models/scope.server";

/** What a page about a project or board puts in its loader data for the header (the deepest one wins). */
export const headerOf = (scope: MemberScope): HeaderContext => ({
  title: scope.kind === "board" ? scope.board.title : scope.project.name,
  projectId: scope.project.id,
  projectName: scope.project.name,
  projectLogo: scope.project.logoKey ? logoUrl(scope.project.id, scope.project.logoKey) : null,
  kind: scope.kind,
  can: { edit: scope.can.edit, manage: scope.can.manage },
  editTo:
    scope.kind === "board"
      ? scope.can.edit
        ? `/${scope.project.id}/board/${scope.board.id}/edit`
        : null
      : scope.can.manage
        ? `/client/${scope.project.id}/edit`
        : null,
  shareTo: scope.kind === "board" && scope.can.edit ? `/${scope.project.id}/board/${scope.board.id}/share` : null,
});
