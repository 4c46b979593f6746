"""Plain SQL, one module per aggregate (`links`, `slices`): what the hot paths read and lock
under row locks, where SQLAlchemy's statement building and unit of work cost more than the
query. Each function takes the session whose transaction it joins (`db.session.driver`) and
answers domain types or plain rows; the services decide what to do with them."""
