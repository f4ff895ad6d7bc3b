/** Thrown for invalid configuration; the CLI prints it and exits with EX_CONFIG (78). */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
    this.variable = variable;
  }
}

export const EX_CONFIG = 78;
