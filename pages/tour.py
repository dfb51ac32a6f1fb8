"""Tour: the article's argument in ten steps, each a live view of the data and the sidebar's values with its
sentences computed from them; Previous / Next and a step picker, the step in the URL (?step=4). The parts are
in ui/tour.py."""

from ui import cache, no_documents, state
from ui import tour as page

state.init_state()

ds = cache.current_dataset()
if not no_documents.page_needs_documents(ds, "Tour", "The Tour (BM25, LSA and their fusions on the dataset's texts)"):
    step = page.navigation()
    page.show(step, page.view(ds))
