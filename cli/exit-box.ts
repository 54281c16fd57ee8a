// Owns the exit code a mode's action leaves for main.ts: commander runs the action, main exits with it.
export interface ExitBox {
  code: number;
}
