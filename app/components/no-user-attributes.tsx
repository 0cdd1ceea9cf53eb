import { Link } from "@remix-run/react";

// Apart from the assigning fields (Conform): the image panel shows it, and the grid page's script holds the panel (bench P8a).

export const NO_USER_ATTRIBUTES = "No user attributes found. Use the 'Manage Attributes' tab to create new user attributes.";

/** The spec's empty state where there is no user attribute to assign: the message and Go to the project's upload page. */
export function NoUserAttributes({ projectId }: { projectId: number }) {
  return (
    <div className="no-user-attributes">
      <p>{NO_USER_ATTRIBUTES}</p>
      <Link to={`/upload/${projectId}`} className="btn">
        Go
      </Link>
    </div>
  );
}
