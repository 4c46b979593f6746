"""Request and response bodies, one module per resource: XCreate, XUpdate, XPublic, XsPublic."""
