"""What a workspace keeps for its user: the folder and its marker (workspace), the history of checks and drills
(progress, a SQLite file in .kata/), and what that history says (history)."""
