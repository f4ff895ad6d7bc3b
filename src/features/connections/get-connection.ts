import type { ServiceContext } from "../../context.ts";
import { authorizeConnections } from "./authorize.ts";
import { type ConnectionRef, findConnection, viewConnection } from "./find-connection.ts";
import type { Connection } from "./schemas.ts";

export async function getConnection(args: {
  ctx: ServiceContext;
  input: ConnectionRef;
}): Promise<Connection> {
  authorizeConnections(args.ctx, "read");
  const row = await findConnection(args.ctx.deps.db, args.ctx, args.input);
  return viewConnection(args.ctx.deps.db, row);
}
