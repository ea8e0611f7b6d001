"use client";

import { useActionState, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { ConnectionSnippets, CopyBlock } from "@/app/_components/copy-block";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { createKeyAction, createUserAction, manageUserAction, revokeKeyAction } from "./actions";

export function CreateUserForm() {
  const [state, action] = useActionState(createUserAction, IDLE);
  return (
    <form action={action} className="form card" aria-labelledby="create-user-heading">
      <h3 id="create-user-heading">Add a user</h3>
      <label>
        E-mail
        <input name="email" type="email" required />
      </label>
      <label>
        Name
        <input name="name" maxLength={200} />
      </label>
      <label>
        Password <span className="muted">(at least 8 characters)</span>
        <input name="password" type="password" minLength={8} required autoComplete="new-password" />
      </label>
      <label>
        Role
        <select name="role" defaultValue="researcher">
          <option value="researcher">Researcher</option>
          <option value="admin">Admin</option>
        </select>
      </label>
      <ActionMessage state={state} />
      <SubmitButton>Add user</SubmitButton>
    </form>
  );
}

export function CreateKeyForm({
  users,
  endpoint,
}: {
  users: { email: string }[];
  endpoint: string;
}) {
  const [state, action] = useActionState(createKeyAction, IDLE);
  const key = state.status === "success" ? state.data?.key : undefined;
  return (
    <form action={action} className="form card" aria-labelledby="create-key-heading">
      <h3 id="create-key-heading">Create an API key</h3>
      <label>
        For user
        <select name="email" required>
          {users.map((user) => (
            <option key={user.email}>{user.email}</option>
          ))}
        </select>
      </label>
      <label>
        Label
        <input name="name" placeholder="e.g. Claude Code on my laptop" maxLength={200} />
      </label>
      <ActionMessage state={state} />
      {key ? (
        <div className="new-key" data-testid="new-key">
          <CopyBlock label="API key" text={key} testId="new-key-value" />
          <ConnectionSnippets endpoint={endpoint} credential={key} />
        </div>
      ) : null}
      <SubmitButton>Create key</SubmitButton>
    </form>
  );
}

export function RevokeKeyForm({ apiKeyId, name }: { apiKeyId: string; name: string }) {
  const [state, action] = useActionState(revokeKeyAction, IDLE);
  return (
    <form action={action} className="inline-form">
      <input type="hidden" name="apiKeyId" value={apiKeyId} />
      <SubmitButton className="button button-danger-outline">
        Revoke<span className="sr-only"> key {name}</span>
      </SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}

export type UserRow = {
  userId: string;
  email: string;
  name: string | null;
  role: "admin" | "researcher";
  since: string;
  disabled: boolean;
};

/**
 * Every user of the team with what an admin can do to them, in one form so its
 * message stays when a deleted user's row goes. Deleting asks once more.
 */
export function UsersTable({ users, selfId }: { users: UserRow[]; selfId: string }) {
  const [state, action] = useActionState(manageUserAction, IDLE);
  const [confirming, setConfirming] = useState<string | null>(null);
  return (
    <form action={action} onSubmit={() => setConfirming(null)} data-testid="user-actions">
      <ActionMessage state={state} />
      <div className="table-wrap">
        <table className="table" data-testid="users">
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Since</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr key={user.userId} data-testid="user-row" data-email={user.email}>
                <td>{user.email}</td>
                <td>{user.name ?? "—"}</td>
                <td data-testid="user-role">{user.role}</td>
                <td data-testid="user-status">
                  {user.disabled ? <span className="badge badge-failed">Disabled</span> : "Active"}
                </td>
                <td>{user.since}</td>
                <td>
                  {user.userId === selfId ? (
                    <span className="muted">You</span>
                  ) : confirming === user.userId ? (
                    <span className="inline-form">
                      <span>Delete {user.email} and their API keys?</span>
                      <SubmitButton
                        className="button button-danger"
                        name="op"
                        value={`delete:${user.userId}`}
                      >
                        Yes, delete<span className="sr-only"> {user.email}</span>
                      </SubmitButton>
                      <button type="button" className="button" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <span className="inline-form">
                      <SubmitButton
                        name="op"
                        value={`${user.role === "admin" ? "make-researcher" : "make-admin"}:${user.userId}`}
                      >
                        {user.role === "admin" ? "Make researcher" : "Make admin"}
                        <span className="sr-only"> {user.email}</span>
                      </SubmitButton>
                      <SubmitButton
                        name="op"
                        value={`${user.disabled ? "enable" : "disable"}:${user.userId}`}
                      >
                        {user.disabled ? "Enable" : "Disable"}
                        <span className="sr-only"> {user.email}</span>
                      </SubmitButton>
                      <button
                        type="button"
                        className="button button-danger-outline"
                        onClick={() => setConfirming(user.userId)}
                      >
                        Delete<span className="sr-only"> {user.email}</span>
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </form>
  );
}
