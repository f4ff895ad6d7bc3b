import { z } from "@hono/zod-openapi";
import { PermissionSchema } from "../api-keys/schemas.ts";

export const MeSchema = z
  .object({
    actor: z.object({ type: z.enum(["api_key", "web_session"]), id: z.string() }),
    user: z.object({ id: z.string(), email: z.string() }),
    organization: z.object({ id: z.string(), name: z.string(), kind: z.enum(["standard", "wallet"]) }),
    role: z.enum(["owner", "admin", "member"]),
    permissions: z.array(PermissionSchema),
  })
  .openapi("Me");
export type Me = z.infer<typeof MeSchema>;
