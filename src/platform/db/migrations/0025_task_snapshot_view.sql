-- A task's snapshot as its view shows it (read-tasks.ts toTask): the connections, and each tool's
-- model name, connection, tool name and description — not its schemas. IMMUTABLE: its result
-- depends on its argument alone, as a stored generated column requires; the snapshot itself is
-- never changed once the task is created.
CREATE FUNCTION task_snapshot_view(snapshot jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'takenAt', snapshot->'takenAt',
    'connections', snapshot->'connections',
    'tools', coalesce(
      (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                'modelName', t->'modelName',
                'connectionId', t->'connectionId',
                'toolName', t->'toolName',
                'description', t->'description')) ORDER BY n)
         FROM jsonb_array_elements(snapshot->'tools') WITH ORDINALITY AS e(t, n)),
      '[]'::jsonb))
$$;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "snapshot_view" jsonb GENERATED ALWAYS AS (task_snapshot_view(snapshot)) STORED NOT NULL;
