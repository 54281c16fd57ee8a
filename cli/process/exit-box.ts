// Owns the exit code a mode's action leaves for main.ts: commander runs the action (its return value
// is ignored), main exits with what the action put here.
export interface ExitBox {
  code: number;
}
