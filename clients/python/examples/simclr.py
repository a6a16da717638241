"""SimCLR with BatchSampler's batches from `batchsampler serve` (one process;
for DDP pass rank/world_size and return the rank's shard_rows from embed)."""
import sys, torch, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
sys.path.insert(0, __file__.rsplit("/examples/", 1)[0])
from batchsampler_client import ServiceBatchSampler

# Start the server first, e.g.:
#   batchsampler serve -b 256 -m 1000 -k 100 -alpha 0.2:0.05 -refresh-every 100 -epochs 10
x = torch.randn(10000, 32)                                   # stand-in dataset
encoder = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64))
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
augment = lambda v: v + 0.1 * torch.randn_like(v)

@torch.no_grad()
def embed(step):                                             # called when a refresh is due
    encoder.eval(); z = torch.cat([encoder(c) for c in x.split(4096)]); encoder.train()
    return F.normalize(z, dim=1)

sampler = ServiceBatchSampler("http://127.0.0.1:8470", embed_fn=embed)
loader = DataLoader(TensorDataset(x), batch_sampler=sampler)
for epoch in range(10):
    for (xb,) in loader:                                     # B instances chosen by the walks
        z1, z2 = F.normalize(encoder(augment(xb)), dim=1), F.normalize(encoder(augment(xb)), dim=1)
        logits = torch.cat([z1, z2]) @ torch.cat([z1, z2]).T / 0.2
        logits.fill_diagonal_(float("-inf"))
        n = len(xb); target = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
        loss = F.cross_entropy(logits, target)               # NT-Xent
        opt.zero_grad(); loss.backward(); opt.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}, step {sampler.step}")
    torch.save({"encoder": encoder.state_dict(), "sampler": sampler.state_dict()}, "ckpt.pt")
