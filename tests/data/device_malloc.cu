// Device-side malloc/free and new/delete (which nvcc compiles to malloc and free).
// tests/test_ptx_isa.cpp (DeviceMalloc.*) checks the results against the heap size of the
// platform (memory.device_heap_bytes).
struct Node {
  int value;
  Node* next;
};

// Thread t builds a list of t % 8 + 1 nodes with new, sums their values (t + i), deletes them:
// sums[t] = the sum, or -1 when an allocation failed.
extern "C" __global__ void lists(int* sums) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  Node* head = nullptr;
  bool ok = true;
  for (int i = 0; i < t % 8 + 1; ++i) {
    Node* n = new Node{t + i, head};
    if (n == nullptr) {
      ok = false;
      break;
    }
    head = n;
  }
  int sum = 0;
  while (head != nullptr) {
    Node* next = head->next;
    sum += head->value;
    delete head;
    head = next;
  }
  sums[t] = ok ? sum : -1;
}

// Thread t asks for `bytes` and keeps the block: blocks[t] = its address (0 when the heap is
// full); it writes t into the block's first and last words.
extern "C" __global__ void hog(unsigned long long* blocks, unsigned long long bytes) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  int* p = static_cast<int*>(malloc(bytes));
  if (p != nullptr) {
    p[0] = t;
    p[bytes / sizeof(int) - 1] = t;
  }
  blocks[t] = reinterpret_cast<unsigned long long>(p);
}

// Frees what hog kept (in a later launch: the heap outlives launches); checks[t] = the words hog
// wrote, summed.
extern "C" __global__ void release(const unsigned long long* blocks, unsigned long long bytes,
                                   int* checks) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  int* p = reinterpret_cast<int*>(blocks[t]);
  checks[t] = p ? p[0] + p[bytes / sizeof(int) - 1] : -1;
  free(p);
}
