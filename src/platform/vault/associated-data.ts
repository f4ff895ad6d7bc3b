/** Where a secret belongs. Sealed under one binding, it opens under no other. */
export type SecretBinding = {
  organizationId: string;
  environmentId: string;
  connectionId: string;
  credentialVersion: number;
};

// Distinct labels keep a data-key wrap from ever authenticating as a secret and vice versa.
const SECRET_LABEL = "patchbay/vault/secret/v1";
const DATA_KEY_LABEL = "patchbay/vault/data-key/v1";

/** Associated data for the secret's ciphertext. */
export function secretAad(binding: SecretBinding): Buffer {
  return encodeFields([SECRET_LABEL, ...bindingFields(binding)]);
}

/** Associated data for the wrapped data key: the binding plus the KEK version that wraps it. */
export function dataKeyAad(binding: SecretBinding, kekVersion: number): Buffer {
  return encodeFields([DATA_KEY_LABEL, ...bindingFields(binding), String(kekVersion)]);
}

/** True when the binding can be encoded unambiguously (non-empty well-formed ids, integer version). */
export function isValidBinding(binding: SecretBinding): boolean {
  const ids = [binding.organizationId, binding.environmentId, binding.connectionId];
  return (
    ids.every((id) => typeof id === "string" && id.length > 0 && isWellFormed(id)) &&
    Number.isSafeInteger(binding.credentialVersion) &&
    binding.credentialVersion >= 0
  );
}

function bindingFields(b: SecretBinding): string[] {
  return [b.organizationId, b.environmentId, b.connectionId, String(b.credentialVersion)];
}

/**
 * Each field as a 4-byte big-endian byte length then its UTF-8 bytes, so no two field lists
 * share an encoding ("ab"+"c" ≠ "a"+"bc"), whatever characters the ids contain.
 */
function encodeFields(fields: readonly string[]): Buffer {
  const chunks: Buffer[] = [];
  for (const field of fields) {
    const bytes = Buffer.from(field, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    chunks.push(length, bytes);
  }
  return Buffer.concat(chunks);
}

// A lone surrogate would encode as U+FFFD, letting two different ids share bytes.
function isWellFormed(s: string): boolean {
  return Buffer.from(s, "utf8").toString("utf8") === s;
}
